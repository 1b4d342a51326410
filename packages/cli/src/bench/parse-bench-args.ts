import type { WorkloadStrategy } from '@warmfold/prefix-cache-testkit'
import { formatUsage, parseFlags } from '../shared/command-flags.ts'
import type { StoreSpec } from '../shared/session-store-spec.ts'
import { UsageError } from '../shared/usage-error.ts'
import { DEFAULT_PROBE_TIMEOUT_SECONDS, LLAMA_WINDOWS } from './bench-flag-values.ts'
import type { BenchFlags } from './bench-flags.ts'
import { BENCH_FLAGS } from './bench-flags.ts'
import type { ProbeDialect } from './probe-dialects.ts'
import { REPORTS_CACHE_WRITES } from './probe-dialects.ts'

/** Where cached tokens come from: the simulator, the embedded llama.cpp KV cache, or an endpoint. */
export type CacheSource =
  | { kind: 'simulator' }
  | { kind: 'llama' }
  | { kind: 'probe'; url: string; model: string; dialect: ProbeDialect; keyEnv?: string; timeoutSeconds: number }

/** Fields the parsed command line may leave out. */
type OptionalArg = 'temperature' | 'stop' | 'summaryRoute' | 'out' | 'keepSessions'

/** The parsed `warmfold bench` command line: the flags' values, with the cache and store resolved. */
export interface BenchArgs
  extends
    Omit<BenchFlags, OptionalArg | 'strategies' | 'store' | 'cache' | `probe${string}`>,
    Partial<Pick<BenchFlags, OptionalArg>> {
  strategies: WorkloadStrategy[]
  /** An SQL store each run's session is kept in, as `<strategy>-<window>` (`--store sqlite:PATH | postgres:URL`). */
  store?: Exclude<StoreSpec, { kind: 'file' }>
  cache: CacheSource
}

/** `warmfold bench --help`, printed from the flag table. */
export const BENCH_USAGE = formatUsage(BENCH_FLAGS)

/**
 * Parses `warmfold bench` flags. `env` is where `--probe-key-env` is looked up.
 * @throws UsageError naming the flag and the allowed values (never a credential).
 */
export function parseBenchArgs(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): BenchArgs {
  const { values, given } = parseFlags(BENCH_FLAGS, argv)
  const { cache, probeUrl: url, probeModel: model, probeDialect: dialect, probeKeyEnv: keyEnv, ...rest } = values
  const { probeTimeout, store, ...flags } = rest
  const llama = cache === 'llama'
  if (flags.strategies.length === 0) throw new UsageError('--strategies must name at least one strategy')
  if (flags.turns > flags.steps)
    throw new UsageError(
      `--turns ${flags.turns} is more than --steps ${flags.steps}; every turn needs at least one step`,
    )
  if (llama && url)
    throw new UsageError('--cache llama and --cache-probe are exclusive; pick one cache to measure with')
  if (!url && (keyEnv !== undefined || model !== 'probe' || dialect !== 'llamacpp' || probeTimeout !== undefined))
    throw new UsageError('--probe-model, --probe-dialect, --probe-key-env and --probe-timeout need --cache-probe URL')
  // Checked here, not when the first request is sent: the value itself is never printed.
  if (keyEnv !== undefined && (env[keyEnv] ?? '').trim() === '')
    throw new UsageError(`--probe-key-env names the environment variable ${keyEnv}, which is not set or is empty`)
  const { price } = flags
  if ((llama || (url && !REPORTS_CACHE_WRITES.has(dialect))) && price.cacheWrite !== 1) {
    const source = llama ? '--cache llama' : `--cache-probe with --probe-dialect ${dialect}`
    throw new UsageError(
      `--price ${price.name} bills cache writes at ${price.cacheWrite}× input, but ${source} reports only cached ` +
        'and uncached tokens, not writes; use a price whose cacheWrite is 1 (deepseek, or a JSON file), or probe ' +
        `a dialect that reports writes (${[...REPORTS_CACHE_WRITES].join(', ')})`,
    )
  }
  if ((llama || url) && flags.profile !== 'bytes') {
    const other = llama ? '--cache llama' : '--cache-probe'
    throw new UsageError(`--profile selects a simulated cache; it cannot be combined with ${other}`)
  }
  const timeoutSeconds = probeTimeout ?? DEFAULT_PROBE_TIMEOUT_SECONDS
  return {
    ...flags,
    windows: llama && !given.has('windows') ? [...LLAMA_WINDOWS] : [...flags.windows],
    strategies: [...flags.strategies],
    ...(store?.kind === 'file' ? { keepSessions: store.directory } : store ? { store } : {}),
    cache: llama
      ? { kind: 'llama' }
      : url
        ? { kind: 'probe', url, model, dialect, ...(keyEnv ? { keyEnv } : {}), timeoutSeconds }
        : { kind: 'simulator' },
  }
}
