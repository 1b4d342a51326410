import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { COMPARISON_STEPS, comparisonTable, runComparison } from '../bench/comparison.ts'

/** The table between the README's comparison markers. */
function readmeTable(): string {
  const readme = readFileSync(join(import.meta.dirname, '..', 'README.md'), 'utf8')
  const match = /<!-- comparison-table -->\n```text\n([\s\S]*?)\n```\n<!-- \/comparison-table -->/.exec(readme)
  if (!match)
    throw new Error('README.md has no ```text block between <!-- comparison-table --> and <!-- /comparison-table -->')
  return match[1]!
}

describe('the README comparison table', () => {
  it('is what bench/comparison-table.ts prints, and states the trade of each host', async () => {
    const runs = await runComparison()
    expect(comparisonTable(runs)).toBe(readmeTable())
    for (const run of runs) {
      expect(run.completed, `${run.strategy} at ${run.window}`).toBe(true)
      expect(run.largestPrompt, `${run.strategy} at ${run.window}`).toBeLessThanOrEqual(run.window)
    }
    for (const window of new Set(runs.map((run) => run.window))) {
      const of = (strategy: string) => runs.find((run) => run.window === window && run.strategy === strategy)!
      // warmfold's summary calls read the cache: each prefills a small fraction of what a cold one does.
      expect(Math.max(...of('warmfold').summaryPrefilled)).toBeLessThan(
        Math.min(...of('cold-summary').summaryPrefilled) / 20,
      )
      expect(of('warmfold').usd).toBeLessThan(of('cold-summary').usd)
      // pruneMessages keeps no summary and drops almost every tool result: the price of its lower cost.
      expect(of('prune-messages')).toMatchObject({ lastSummarized: false, lastToolResults: 1 })
      expect(of('prune-messages').lastToolResults).toBeLessThan(COMPARISON_STEPS / 10)
    }
  }, 120_000)
})
