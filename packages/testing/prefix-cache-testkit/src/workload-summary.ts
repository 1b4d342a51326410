import { CHARS_PER_TOKEN, tokensOf } from './cache-profile.ts'
import { createRandom } from './workload-text.ts'

/**
 * The size range of {@link workloadSummary}'s checkpoints, in simulated tokens (`tokensOf` their
 * characters): what summary calls write in practice. Anthropic's cookbook summary was 1,526
 * tokens (with `max_tokens` 5,000), Anthropic's on-demand compaction example allows 4,096, and
 * warmfold's engine caps a summary at 8,192.
 */
export const WORKLOAD_SUMMARY_TOKENS: Readonly<{ min: number; max: number }> = Object.freeze({ min: 1500, max: 4000 })

/** The eight sections the engine's instruction asks for, in its order. */
const SECTIONS = [
  'Goal and Intent',
  'Key Decisions',
  'Files and Code',
  'Errors and Fixes',
  'Pending Work',
  'Current Work',
  'Next Step',
  'Critical Context',
] as const
type Section = (typeof SECTIONS)[number]

/** Modules a fold's checkpoint covers more than the previous one's: the workload reads one module per step. */
const MODULES_PER_FOLD = 16

/**
 * The checkpoint the scripted model writes for the summary call of fold `foldIndex` (from 0): a
 * realistic engineering checkpoint of the workload's session (refactoring a module loader by
 * reading `src/module-N.ts` one by one) with the eight sections warmfold's compaction instruction
 * asks for (goal, decisions, files and code, errors and fixes, pending work, current work, next
 * step, critical context), each a list of terse bullets with paths, signatures, commands and
 * exact error messages.
 *
 * Its size is drawn for each fold from 1,600 to 4,000 tokens (so decode time is realistic), then
 * capped at `options.maxTokens` (the summary call's output cap: a model stops there, so below
 * 1,500 the checkpoint is shorter than that); whole bullets are added until the next one would
 * pass the size, so the result is at most that size and at most one bullet (under 100 tokens)
 * shorter: from {@link WORKLOAD_SUMMARY_TOKENS}' 1,500 to 4,000 tokens uncapped. The same fold and options give
 * the same text; different folds give different texts and sizes.
 * @throws RangeError when `foldIndex` is not an integer ≥ 0, or `maxTokens` is not an integer
 *   large enough for one bullet per section (the smallest checkpoint, {@link minimumWorkloadSummaryTokens}).
 */
export function workloadSummary(foldIndex: number, options: { readonly maxTokens?: number } = {}): string {
  const { drawnTokens, sources, bullets } = summaryStart(foldIndex)
  const { maxTokens } = options
  const minimum = tokensOf(render(bullets).length)
  if (maxTokens !== undefined && (!Number.isSafeInteger(maxTokens) || maxTokens < minimum)) {
    throw new RangeError(
      `workloadSummary: maxTokens must be an integer ≥ ${minimum} (one bullet per section for fold ${foldIndex}), ` +
        `got ${maxTokens}`,
    )
  }
  const budgetChars = Math.min(drawnTokens, maxTokens ?? Number.POSITIVE_INFINITY) * CHARS_PER_TOKEN
  // Files grow fastest, as in a real checkpoint: every module read leaves its path and API behind.
  const rotation: Section[] = [
    'Files and Code',
    'Files and Code',
    'Key Decisions',
    'Files and Code',
    'Errors and Fixes',
    'Critical Context',
    'Files and Code',
    'Pending Work',
  ]
  let length = render(bullets).length
  for (let turn = 0; ; turn++) {
    const section = rotation[turn % rotation.length] as Section
    const bullet = sources[section]()
    // Each bullet adds one line to its section: a newline, "- " and the bullet.
    length += 3 + bullet.length
    if (length > budgetChars) return render(bullets)
    bullets.get(section)!.push(bullet)
  }
}

/**
 * The size of fold `foldIndex`'s smallest checkpoint (one bullet per section), in tokens: the lowest `maxTokens`
 * {@link workloadSummary} takes.
 */
export function minimumWorkloadSummaryTokens(foldIndex: number): number {
  return tokensOf(render(summaryStart(foldIndex).bullets).length)
}

/**
 * A fold's drawn size, its bullet sources, and the first bullet of every section (drawn in this order, so both
 * callers see the same text).
 */
function summaryStart(foldIndex: number): {
  drawnTokens: number
  sources: Record<Section, () => string>
  bullets: Map<Section, string[]>
} {
  if (!Number.isSafeInteger(foldIndex) || foldIndex < 0)
    throw new RangeError(`workloadSummary: foldIndex must be an integer ≥ 0, got ${foldIndex}`)
  const random = createRandom(0x5eed + foldIndex)
  const drawnTokens = 1600 + Math.floor(random() * (WORKLOAD_SUMMARY_TOKENS.max - 1600 + 1))
  const sources = bulletSources(foldIndex, random)
  const bullets = new Map<Section, string[]>(SECTIONS.map((section) => [section, [sources[section]()]]))
  return { drawnTokens, sources, bullets }
}

function render(bullets: ReadonlyMap<Section, readonly string[]>): string {
  return SECTIONS.map((section) =>
    [`## ${section}`, ...(bullets.get(section) ?? []).map((bullet) => `- ${bullet}`)].join('\n'),
  ).join('\n')
}

const EXPORT_KINDS =
  'createLoader resolveSpecifier readManifest registerHook normalizePath loadConfig watchChanges parseImports'.split(
    ' ',
  )
const DEPENDENCIES = 'src/registry.ts src/cache.ts src/paths.ts src/hooks.ts src/config.ts src/errors.ts'.split(' ')
const NOTES = [
  'reads the file system at import time; must move behind the registry',
  'keeps a module-level Map as a cache; the registry will own it',
  'throws plain Error objects; switch to LoaderError with a code',
  'already pure; only its import path changes',
  'duplicates the specifier resolution of src/paths.ts',
  'registers a process exit hook; keep it, tests rely on the flush',
  'exports a default object and named functions; callers use both',
  'mutates the options object it is given; copy it first',
] as const
const TEST_NOTES = [
  'builds the loader by hand; switch to `createRegistry()`',
  'stubs the file system with a temporary folder; keep it',
  'asserts on an error message; assert on the code instead',
  'covers only the happy path; the CYCLE case is untested',
] as const
const ERRORS = [
  (module: number) =>
    `\`search\` for "require(" found 3 CommonJS calls in src/module-${module}.ts; replaced by \`await import()\` ` +
    `(ESM only)`,
  (module: number) =>
    `\`pnpm test\` failed in test/module-${module}.test.ts: "TypeError: Cannot read properties of undefined ` +
    `(reading 'resolve')"; the test built a loader without the registry, fixed by passing \`createRegistry()\``,
  (module: number) =>
    `tsc: "src/module-${module}.ts(41,7): error TS2345: Argument of type 'string | undefined' is not assignable ` +
    `to parameter of type 'string'"; guarded the optional \`options.root\``,
  (module: number) =>
    `run_tests timed out after 120 s in test/module-${module}.test.ts (a watcher left open); open: close it in ` +
    `\`afterEach\``,
  (module: number) =>
    `oxlint: "src/module-${module}.ts:12:1: typescript/consistent-type-imports"; the import of \`LoaderOptions\` ` +
    `is type-only now`,
  (module: number) =>
    `\`pnpm test\` in test/loader.test.ts: "LoaderError: CYCLE src/module-${module}.ts -> src/registry.ts -> ` +
    `src/module-${module}.ts"; broken by importing the type only`,
] as const
const DECISIONS = [
  'Keep `loadModule(name, options)` as the only public entry point; every other export of src/loader.ts becomes ' +
    'internal',
  'One registry instance per loader, created by `createRegistry()`; no module-level state, so tests can run in ' +
    'parallel',
  'Errors are `LoaderError` with a `code` (`NOT_FOUND`, `CYCLE`, `INVALID_MANIFEST`); never match on messages',
  'Paths are normalized once, in src/paths.ts, with POSIX separators; modules never call `path.resolve` themselves',
  'Rejected: lazy loading through a Proxy (hides errors until first use and breaks `instanceof` checks in the tests)',
  'Rejected: moving the cache into a WeakMap keyed by module object (specifiers are strings, so entries would ' +
    'never be collected)',
  'Manifests are validated when read, not when used, so a bad manifest fails at start-up with its path',
  'Hooks run in registration order; a hook that throws stops the load and is named in the error',
] as const
const FACTS = [
  'Tests run with `pnpm test` (vitest); one file: `pnpm vitest run test/loader.test.ts`',
  'The user asked for no public API change until every module is read, then one change at a time with green tests ' +
    'in between',
  'Node 20, ESM only, TypeScript strict with `exactOptionalPropertyTypes`',
  'The CI job `check` runs lint, typecheck and tests; a warning from oxlint fails it',
  'Do not touch src/legacy/ (frozen for the 2.x line, per the user)',
  'The loader must stay synchronous for JSON manifests: the CLI reads them before the event loop starts',
  'The user prefers small commits, each with its test, and no new dependency without asking',
  'Benchmarks in bench/loader.bench.ts: cold load of all modules must stay under 40 ms on CI',
] as const

/** Cycles through `items`; from the second round on, each item says which module it was seen again at. */
function cycle(items: readonly string[], module: (round: number) => number): () => string {
  let index = 0
  return () => {
    const round = Math.floor(index / items.length)
    const item = items[index++ % items.length] as string
    return round === 0 ? item : `${item} (still holds after src/module-${module(round)}.ts)`
  }
}

/** A function per section that returns its next bullet, drawing details from `random`. */
function bulletSources(foldIndex: number, random: () => number): Record<Section, () => string> {
  const first = foldIndex * MODULES_PER_FOLD
  // The module being read when the fold starts; a checkpoint covers every module before it.
  const current = first + MODULES_PER_FOLD + 3
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T
  const twoOf = (items: readonly string[]): string => {
    const at = Math.floor(random() * items.length)
    return `${items[at]} and ${items[(at + 1 + Math.floor(random() * (items.length - 1))) % items.length]}`
  }
  let file = 0
  let error = 0
  let pending = 0
  return {
    'Goal and Intent': cycle(
      [
        'Refactor the module loader (src/loader.ts): load every module through one registry, no public API change, ' +
          'every test green',
      ],
      () => current,
    ),
    'Key Decisions': cycle(DECISIONS, (round) => first + round * 5),
    'Files and Code': () => {
      // Each module's source first, then its test, then where it is called from.
      const module = file % current
      const pass = Math.floor(file++ / current)
      if (pass === 0)
        return (
          `src/module-${module}.ts: exports \`${pick(EXPORT_KINDS)}${module}(options: LoaderOptions): ` +
          (`Promise<Module${module}>\` (line ${20 + Math.floor(random() * 400)}); imports ${twoOf(DEPENDENCIES)}; ` +
            `${pick(NOTES)}`)
        )
      if (pass === 1) return `test/module-${module}.test.ts: ${2 + Math.floor(random() * 9)} cases; ${pick(TEST_NOTES)}`
      return (
        `src/module-${module}.ts is imported by src/loader.ts (line ${100 + Math.floor(random() * 300)}) and ` +
        `${pick(DEPENDENCIES)}`
      )
    },
    'Errors and Fixes': () => (ERRORS[error % ERRORS.length] as (module: number) => string)(first + 3 * error++),
    'Pending Work': () => {
      const from = current + 1 + 8 * pending++
      return (
        `Read src/module-${from}.ts to src/module-${from + 7}.ts and note each one's exports, imports and ` +
        `module-level state`
      )
    },
    'Current Work': cycle(
      [`Reading src/module-${current}.ts: listing its exports and whether it touches the file system at import time`],
      () => current,
    ),
    'Next Step': cycle(
      [`Read src/module-${current + 1}.ts with read_file, then add its entry under Files and Code`],
      () => current,
    ),
    'Critical Context': cycle(FACTS, (round) => first + round * 7),
  }
}
