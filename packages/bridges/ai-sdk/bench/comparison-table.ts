import { comparisonTable, runComparison } from './comparison.ts'

// Prints the README's comparison table: `npx -y pnpm@12.4.2 --filter @warmfold/ai-sdk table`.
console.log(comparisonTable(await runComparison()))
