import { fillerText } from './workload-text.ts'

/** The artifact classes the coding workload plants and keeps a record of. */
export type PlantedClass = 'path' | 'command' | 'error'

/** One literal fact the simulator put into the session, written as the fold audit normalizes it. */
export interface PlantedArtifact {
  readonly class: PlantedClass
  readonly text: string
}

/** One scripted tool step of the coding workload. */
export interface CodingStep {
  readonly name: string
  /** Raw JSON arguments. */
  readonly arguments: string
  readonly result: string
  readonly isError: boolean
  /** Every path, command and error message the call and its result hold, by construction. */
  readonly artifacts: readonly PlantedArtifact[]
}

const json = (value: unknown): string => JSON.stringify(value)

/**
 * A source file of about `length` characters, as `read_file` returns it: comments
 * and code, no path, command or error in it.
 */
function sourceBody(index: number, length: number): string {
  const lines = [
    `export interface Cart${index} {`,
    '  readonly items: readonly { readonly price: number; readonly quantity: number }[]',
    '}',
    '',
  ]
  let text = lines.join('\n')
  for (let block = 0; text.length < length; block++) {
    text +=
      `\n// ${fillerText(index * 100 + block, 160)}\nexport function part${index}x${block}(cart: Cart${index}): ` +
      `number {\n  return cart.items.reduce((sum, item) => sum + item.price * item.quantity, ${block})\n}\n`
  }
  return text.slice(0, length)
}

/**
 * Tool step `index` of the coding workload: a cycle of six kinds of step an agent takes while
 * fixing a bug: read a source file, type-check a package (a TypeScript error), run a test file
 * (a failing vitest run), edit a file, look at a diff, search with ripgrep. Every path, command
 * and error message holds the step's index, so each step's artifacts are its own: nothing the
 * fold drops is repeated later, and the simulator's record of what a fold dropped is exact.
 * `readChars` sizes a read file's content.
 */
export function codingStep(index: number, readChars: number): CodingStep {
  const i = index
  switch (index % 6) {
    case 0: {
      const path = `src/feature-${i}/service.ts`
      return {
        name: 'read_file',
        arguments: json({ path }),
        result: sourceBody(i, readChars),
        isError: false,
        artifacts: [{ class: 'path', text: path }],
      }
    }
    case 1: {
      const command = `pnpm tsc --noEmit -p packages/app-${i}`
      const error = `TS2322: Type 'string' is not assignable to type 'OrderTotal${i}'`
      return bashStep(command, `packages/app-${i}/src/orders.ts(${12 + i},5): error ${error}.\nExit code: 2`, true, [
        { class: 'path', text: `packages/app-${i}` },
        { class: 'path', text: `packages/app-${i}/src/orders.ts` },
        { class: 'error', text: error },
      ])
    }
    case 2: {
      const file = `test/feature-${i}.test.ts`
      const command = `pnpm vitest run ${file}`
      const failed = `FAIL ${file} > totals > adds tax for region ${i}`
      const assertion = `AssertionError: expected 119 to be 10${i} // Object.is equality`
      const result =
        ` FAIL  ${file} > totals > adds tax for region ${i}\n${assertion}\n ❯ ${file}:${20 + i}:17\n\n Test ` +
        `Files  1 failed (1)\n      Tests  1 failed | 4 passed (5)\nExit code: 1`
      return bashStep(command, result, true, [
        { class: 'path', text: file },
        { class: 'error', text: failed },
        { class: 'error', text: assertion },
      ])
    }
    case 3: {
      const path = `src/feature-${i}/cart.ts`
      return {
        name: 'edit_file',
        arguments: json({ path, old_string: 'const rate = 0', new_string: 'const rate = taxRate(cart.region)' }),
        result: 'ok',
        isError: false,
        artifacts: [{ class: 'path', text: path }],
      }
    }
    case 4: {
      const path = `src/feature-${i}/cart.ts`
      const command = `git diff -- ${path}`
      const result = [
        `diff --git a/${path} b/${path}`,
        `--- a/${path}`,
        `+++ b/${path}`,
        '@@ -40,7 +40,7 @@ export function total(cart: Cart): number {',
        '-  const rate = 0',
        '+  const rate = taxRate(cart.region)',
      ].join('\n')
      return bashStep(command, result, false, [{ class: 'path', text: path }])
    }
    default: {
      const folder = `src/feature-${i}`
      const command = `rg -n "computeTotal${i}" ${folder}`
      const result =
        `${folder}/cart.ts:42:export function computeTotal${i}(cart: Cart): number {\n${folder}/checkout.ts:17:  ` +
        `const total = computeTotal${i}(cart)`
      return bashStep(command, result, false, [
        { class: 'path', text: folder },
        { class: 'path', text: `${folder}/cart.ts` },
        { class: 'path', text: `${folder}/checkout.ts` },
      ])
    }
  }
}

/** A `bash` step running `command`; its artifacts are the command, then `others`. */
function bashStep(command: string, result: string, isError: boolean, others: readonly PlantedArtifact[]): CodingStep {
  const artifacts = [{ class: 'command' as const, text: command }, ...others]
  return { name: 'bash', arguments: json({ command }), result, isError, artifacts }
}

/** The first user message of the coding workload. */
export const CODING_FIRST_MESSAGE = 'Fix the failing checkout tests in this repository. Do not change the public API.'

/** The user's message at the start of turn `turn` (from 1): a correction naming a file, as users write them. */
export function codingCorrection(turn: number): {
  readonly text: string
  readonly artifacts: readonly PlantedArtifact[]
} {
  const path = `src/feature-${turn}/api.ts`
  return {
    text: `No, keep the public API of ${path} unchanged and go on with the next failures.`,
    artifacts: [{ class: 'path', text: path }],
  }
}
