import {
  DEFAULT_LATENCY_PROFILE,
  DEFAULT_PROBE_TIMEOUT_MS,
  DEFAULT_STRATEGIES,
  EFFORTS,
  LATENCY_PROFILES,
  LATENCY_SYNTAX,
  PRICE_PROFILES,
  PRICE_SYNTAX,
  PROFILE_SYNTAX,
  PRUNERS,
  parseCacheProfile,
  STRATEGIES,
  WORKLOAD_KINDS,
} from '@warmfold/prefix-cache-testkit'
import type {
  LatencyProfile,
  PriceProfile,
  WorkloadKind,
  WorkloadPruner,
  WorkloadStrategy,
} from '@warmfold/prefix-cache-testkit'
import { readLatencyProfile } from '../shared/read-latency-profile.ts'
import { readPriceProfile } from '../shared/read-price-profile.ts'
import type { ProbeDialect } from './probe-dialects.ts'
import { PROBE_DIALECTS, REPORTS_CACHE_WRITES } from './probe-dialects.ts'
import type { StoreSpec } from '../shared/session-store-spec.ts'
import { parseStoreSpec, STORE_SYNTAX } from '../shared/session-store-spec.ts'
import { UsageError } from '../shared/usage-error.ts'

/** Where cached tokens come from: the simulator, the embedded llama.cpp KV cache, or an endpoint. */
export type CacheSource =
  | { kind: 'simulator' }
  | { kind: 'llama' }
  | { kind: 'probe'; url: string; model: string; dialect: ProbeDialect; keyEnv?: string; timeoutSeconds: number }

/** The parsed `warmfold bench` command line. */
export interface BenchArgs {
  windows: number[]
  steps: number
  strategies: WorkloadStrategy[]
  effort: string
  temperature?: number
  stop?: string[]
  profile: string
  pruner: WorkloadPruner
  summaryRoute?: string
  /** What tokens cost (`--price`). */
  price: PriceProfile
  /** How long requests take (`--latency`): the clock the folds' waits (`stall`, the `wait` column) are measured on. */
  latency: LatencyProfile
  /** `--background-fold on|off`: warmfold's engine summarizes beside the conversation. Default on. */
  backgroundFold: boolean
  /** `--prewarm on|off`: after a background swap, write the post-swap prefix before the next request. Default off. */
  prewarm: boolean
  /** `--workload reading|coding`: what the scripted session does. Default reading. */
  workload: WorkloadKind
  /** `--artifact-trail on|off`: warmfold's artifact trail in every checkpoint. Default on. */
  artifactTrail: boolean
  /** User turns the steps are split across. */
  turns: number
  /** Virtual seconds between turns. */
  idleSeconds: number
  /** `--idle-compaction on|off` for the warmfold strategy (reference strategies never fold while idle). Default on. */
  idleCompaction: boolean
  /** Virtual seconds per model request. */
  stepSeconds: number
  json: boolean
  out?: string
  /** Folder each run's session log is written to, as `<strategy>-<window>.jsonl` (`--keep-sessions`). */
  keepSessions?: string
  /** An SQL store each run's session is kept in, as `<strategy>-<window>` (`--store sqlite:PATH | postgres:URL`). */
  store?: Exclude<StoreSpec, { kind: 'file' }>
  cache: CacheSource
  help: boolean
}

/**
 * Largest `--windows` value, in tokens (the largest context window in common use). The
 * simulator keeps every distinct prompt segment, so memory grows with window × steps: `cold`,
 * the heaviest strategy, about 1.1 bytes per window token per step. At both bounds the default
 * three strategies peak at 2.8 GB and take 81 s on a 2-core machine, within Node's default
 * 4 GiB heap (they also complete in 3 GiB).
 */
export const MAX_WINDOW = 2_000_000

/** Largest `--steps` value: about 58 folds at any window; memory and time grow linearly with it. */
export const MAX_STEPS = 1000

/** Default and largest `--probe-timeout`, in seconds (the largest stays far below Node's timer limit of 24.8 days). */
export const DEFAULT_PROBE_TIMEOUT_SECONDS = DEFAULT_PROBE_TIMEOUT_MS / 1000
export const MAX_PROBE_TIMEOUT_SECONDS = 86_400

/** Largest `--idle` and `--step-seconds`, in seconds (30 days: far beyond any provider's cache lifetime). */
export const MAX_VIRTUAL_SECONDS = 30 * 86_400

/** The price `warmfold bench` bills with unless told otherwise: writes cost plain input, so every cache source can be priced. */
export const DEFAULT_PRICE = 'deepseek'

/** Windows that fit the embedded llama cache server's context (its tiny vocabulary makes about 2.8 tokens per simulated token). */
export const LLAMA_WINDOWS = [8000, 16000]

export const BENCH_USAGE = `Usage: warmfold bench [options]

Runs the scripted coding workload for each window × strategy through the real agent loop,
token meter, pruner and compaction engine, and prints the prefix-cache economics.

Options:
  --windows LIST        context windows in tokens, comma-separated, each 4800 to ${MAX_WINDOW}
                        (default 32000,128000,512000)
  --steps N             tool steps before the final answer, 1 to ${MAX_STEPS} (default 60)
  --strategies LIST     comma-separated: ${STRATEGIES.join(' | ')}
                        (default ${DEFAULT_STRATEGIES.join(',')}; the others model peer agents' summary calls)
  --effort E            conversation reasoning effort: ${EFFORTS.join(' | ')} (default max)
  --temperature T       conversation temperature (default unset)
  --stop S              a stop sequence (repeat the flag for several; default none)
  --profile P           simulated cache: ${PROFILE_SYNTAX} (default bytes)
  --pruner P            ${PRUNERS.join(' | ')} (default rewrite-only)
  --summary-route R     send summary calls to provider/model
  --price P             what tokens cost: ${PRICE_SYNTAX} with the keys cacheRead,
                        cacheWrite, output (multipliers of an uncached input token) and optional
                        usdPerMillionInput (default ${DEFAULT_PRICE})
  --latency P           how long requests take: ${LATENCY_SYNTAX} with the keys
                        ttftMs, prefillTokensPerSecond, cachedTokensPerSecond, decodeTokensPerSecond
                        (default ${DEFAULT_LATENCY_PROFILE}): every simulated request takes its time on a
                        virtual clock, so the wait column and --json's stall are in seconds
  --background-fold on|off
                        warmfold summarizes beside the conversation from its soft threshold on and
                        swaps the checkpoint in at a request boundary, instead of blocking the turn
                        for the summary call (default on)
  --prewarm on|off      after a background fold's swap, write the post-swap prefix with a 1-token
                        request before the next conversation request reads it (default off)
  --workload W          what the scripted session does: reading (reads one module per step; the cache
                        economics) | coding (fixes failing tests: paths, commands, compiler and test
                        output, diffs, user corrections, summarized by a seeded lossy summarizer;
                        every summary call's fold audit is in --json) (default reading)
  --artifact-trail on|off
                        warmfold's artifact trail, written by code into every checkpoint (default on)
  --turns N             split the steps across N user turns, 1 to --steps (default 1)
  --idle S              virtual seconds between a turn's answer and the next user message, during
                        which cache entries may expire (default 0)
  --idle-compaction on|off
                        warmfold folds while the cache is warm when the agent goes idle between
                        turns under pressure (default on; reference strategies never do)
  --step-seconds S      virtual seconds each tool call takes between model requests (default 15)
  --json                print one JSON document on stdout instead of the table
  --out FILE            also write the JSON document to FILE (checked before the run; its folder
                        must exist)
  --keep-sessions DIR   write each run's session log to DIR/<strategy>-<window>.jsonl, for warmfold
                        report (checked before the run: DIR must exist, the files must not)
  --store ${STORE_SYNTAX}
                        keep each run's session, as <strategy>-<window>, in that store (file:DIR is
                        --keep-sessions DIR; sqlite and postgres need their store package installed;
                        checked before the run: no such session may exist there)
  --cache llama         measure cached tokens with a real llama.cpp KV cache (embedded server, a fresh
                        one per run; default windows ${LLAMA_WINDOWS.join(',')}; takes minutes on 2 cores)
  --cache-probe URL     measure cached tokens at a real endpoint (llama-server, vLLM, DeepSeek, OpenAI,
                        Anthropic, Gemini, ...): every request is also sent there with a 1-token
                        output cap
  --probe-model M       model id sent to the endpoint (default probe)
  --probe-dialect D     ${PROBE_DIALECTS.join(' | ')}
                        (default llamacpp; the chat completions dialects are built in, the other wire
                        formats need their adapter package installed)
  --probe-key-env VAR   environment variable holding the endpoint's API key (default none)
  --probe-timeout S     seconds to wait for each probed response, 0.001 to ${MAX_PROBE_TIMEOUT_SECONDS}
                        (default ${DEFAULT_PROBE_TIMEOUT_SECONDS}; raise it for a slow local server)
  -h, --help            show this help

Progress goes to stderr. Exit codes: 0 ok, 1 a run failed (or the probed endpoint failed: its
answer is printed), 2 bad flags.`

const VALUE_FLAGS = new Set([
  '--store',
  '--windows',
  '--steps',
  '--strategies',
  '--effort',
  '--temperature',
  '--stop',
  '--profile',
  '--pruner',
  '--summary-route',
  '--price',
  '--latency',
  '--background-fold',
  '--prewarm',
  '--workload',
  '--artifact-trail',
  '--turns',
  '--idle',
  '--step-seconds',
  '--idle-compaction',
  '--out',
  '--keep-sessions',
  '--cache',
  '--cache-probe',
  '--probe-model',
  '--probe-dialect',
  '--probe-key-env',
  '--probe-timeout',
])

/**
 * Parses `warmfold bench` flags. `env` is where `--probe-key-env` is looked up.
 * @throws UsageError naming the flag and the allowed values (never a credential).
 */
export function parseBenchArgs(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): BenchArgs {
  const args: BenchArgs = {
    windows: [32000, 128000, 512000],
    steps: 60,
    strategies: [...DEFAULT_STRATEGIES],
    effort: 'max',
    profile: 'bytes',
    pruner: 'rewrite-only',
    price: PRICE_PROFILES[DEFAULT_PRICE],
    latency: LATENCY_PROFILES[DEFAULT_LATENCY_PROFILE],
    backgroundFold: true,
    prewarm: false,
    workload: 'reading',
    artifactTrail: true,
    turns: 1,
    idleSeconds: 0,
    idleCompaction: true,
    stepSeconds: 15,
    json: false,
    cache: { kind: 'simulator' },
    help: false,
  }
  let windowsGiven = false
  let storeGiven = false
  const probe = {
    url: undefined as string | undefined,
    model: 'probe',
    dialect: 'llamacpp' as ProbeDialect,
    keyEnv: undefined as string | undefined,
    timeoutSeconds: undefined as number | undefined,
  }
  let llama = false
  for (let index = 0; index < argv.length; index++) {
    const raw = argv[index] as string
    const [flag, inline] =
      raw.startsWith('--') && raw.includes('=')
        ? [raw.slice(0, raw.indexOf('=')), raw.slice(raw.indexOf('=') + 1)]
        : [raw, undefined]
    let value = inline
    if (VALUE_FLAGS.has(flag) && value === undefined) {
      value = argv[++index]
      if (value === undefined) throw new UsageError(`${flag} needs a value`)
    }
    const text = value as string
    switch (flag) {
      case '-h':
      case '--help':
        args.help = true
        break
      case '--json':
        args.json = true
        break
      case '--windows':
        args.windows = text
          .split(',')
          .map((item) =>
            boundedInteger(
              '--windows',
              item,
              4800,
              MAX_WINDOW,
              "tokens (the simulator's memory grows with window × steps)",
            ),
          )
        windowsGiven = true
        break
      case '--cache':
        if (text !== 'llama' && text !== 'simulator')
          throw new UsageError(`--cache must be one of simulator, llama, got ${JSON.stringify(text)}`)
        llama = text === 'llama'
        break
      case '--cache-probe':
        probe.url = probeURL(text)
        break
      case '--probe-model':
        if (text.trim() === '') throw new UsageError('--probe-model must not be empty')
        probe.model = text
        break
      case '--probe-dialect':
        probe.dialect = oneOf('--probe-dialect', text, PROBE_DIALECTS)
        break
      case '--probe-key-env':
        if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(text))
          throw new UsageError(`--probe-key-env must be an environment variable name, got ${JSON.stringify(text)}`)
        probe.keyEnv = text
        break
      case '--probe-timeout':
        probe.timeoutSeconds = probeTimeout(text)
        break
      case '--steps':
        args.steps = boundedInteger(
          '--steps',
          text,
          1,
          MAX_STEPS,
          "steps (the simulator's memory and time grow with window × steps)",
        )
        break
      case '--strategies':
        args.strategies = text.split(',').map((item) => oneOf('--strategies', item, STRATEGIES))
        break
      case '--effort':
        args.effort = oneOf('--effort', text, EFFORTS)
        break
      case '--temperature': {
        const number = Number(text)
        if (text.trim() === '' || !Number.isFinite(number) || number < 0)
          throw new UsageError(`--temperature must be a number ≥ 0, got ${JSON.stringify(text)}`)
        args.temperature = number
        break
      }
      case '--stop':
        args.stop = [...(args.stop ?? []), text]
        break
      case '--profile':
        try {
          parseCacheProfile(text)
        } catch (error) {
          throw new UsageError(`--profile: ${(error as Error).message}`)
        }
        args.profile = text
        break
      case '--pruner':
        args.pruner = oneOf('--pruner', text, PRUNERS)
        break
      case '--summary-route':
        if (!/^[^/\s]+\/[^/\s]+$/.test(text))
          throw new UsageError(`--summary-route must be provider/model, got ${JSON.stringify(text)}`)
        args.summaryRoute = text
        break
      case '--price':
        args.price = readPriceProfile(text)
        break
      case '--latency':
        args.latency = readLatencyProfile(text)
        break
      case '--background-fold':
        args.backgroundFold = oneOf('--background-fold', text, ['on', 'off'] as const) === 'on'
        break
      case '--prewarm':
        args.prewarm = oneOf('--prewarm', text, ['on', 'off'] as const) === 'on'
        break
      case '--workload':
        args.workload = oneOf('--workload', text, WORKLOAD_KINDS)
        break
      case '--artifact-trail':
        args.artifactTrail = oneOf('--artifact-trail', text, ['on', 'off'] as const) === 'on'
        break
      case '--turns':
        args.turns = boundedInteger('--turns', text, 1, MAX_STEPS, 'turns (at most --steps)')
        break
      case '--idle':
        args.idleSeconds = virtualSeconds('--idle', text)
        break
      case '--idle-compaction':
        args.idleCompaction = oneOf('--idle-compaction', text, ['on', 'off'] as const) === 'on'
        break
      case '--step-seconds':
        args.stepSeconds = virtualSeconds('--step-seconds', text)
        break
      case '--out':
        args.out = text
        break
      case '--keep-sessions':
        if (storeGiven)
          throw new UsageError('--keep-sessions DIR and --store are exclusive: --keep-sessions DIR is --store file:DIR')
        args.keepSessions = text
        break
      case '--store': {
        if (args.keepSessions !== undefined || storeGiven)
          throw new UsageError('--store is given twice, or with --keep-sessions DIR (which is --store file:DIR)')
        const spec = parseStoreSpec('--store', text)
        storeGiven = true
        if (spec.kind === 'file') args.keepSessions = spec.directory
        else args.store = spec
        break
      }
      default:
        throw new UsageError(`unknown flag ${JSON.stringify(raw)}; run warmfold bench --help for the flags`)
    }
  }
  if (args.strategies.length === 0) throw new UsageError('--strategies must name at least one strategy')
  if (args.turns > args.steps)
    throw new UsageError(`--turns ${args.turns} is more than --steps ${args.steps}; every turn needs at least one step`)
  if (llama && probe.url)
    throw new UsageError('--cache llama and --cache-probe are exclusive; pick one cache to measure with')
  if (
    !probe.url &&
    (probe.keyEnv !== undefined ||
      probe.model !== 'probe' ||
      probe.dialect !== 'llamacpp' ||
      probe.timeoutSeconds !== undefined)
  ) {
    throw new UsageError('--probe-model, --probe-dialect, --probe-key-env and --probe-timeout need --cache-probe URL')
  }
  // Checked here, not when the first request is sent: the value itself is never printed.
  if (probe.keyEnv !== undefined && (env[probe.keyEnv] ?? '').trim() === '') {
    throw new UsageError(`--probe-key-env names the environment variable ${probe.keyEnv}, which is not set or is empty`)
  }
  if ((llama || (probe.url && !REPORTS_CACHE_WRITES.has(probe.dialect))) && args.price.cacheWrite !== 1) {
    const source = llama ? '--cache llama' : `--cache-probe with --probe-dialect ${probe.dialect}`
    const writers = [...REPORTS_CACHE_WRITES].join(', ')
    throw new UsageError(
      `--price ${args.price.name} bills cache writes at ${args.price.cacheWrite}× input, but ${source} reports only cached and uncached tokens, not writes; use a price whose cacheWrite is 1 (deepseek, or a JSON file), or probe a dialect that reports writes (${writers})`,
    )
  }
  if (llama) {
    args.cache = { kind: 'llama' }
    if (!windowsGiven) args.windows = [...LLAMA_WINDOWS]
    if (args.profile !== 'bytes')
      throw new UsageError('--profile selects a simulated cache; it cannot be combined with --cache llama')
  } else if (probe.url) {
    args.cache = {
      kind: 'probe',
      url: probe.url,
      model: probe.model,
      dialect: probe.dialect,
      ...(probe.keyEnv ? { keyEnv: probe.keyEnv } : {}),
      timeoutSeconds: probe.timeoutSeconds ?? DEFAULT_PROBE_TIMEOUT_SECONDS,
    }
    if (args.profile !== 'bytes')
      throw new UsageError('--profile selects a simulated cache; it cannot be combined with --cache-probe')
  }
  return args
}

function boundedInteger(flag: string, text: string, minimum: number, maximum: number, why: string): number {
  const number = Number(text)
  if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(number) || number < minimum) {
    throw new UsageError(
      `${flag} must be ${minimum === 1 ? 'a positive integer' : `an integer ≥ ${minimum}`}, got ${JSON.stringify(text)}`,
    )
  }
  if (number > maximum) throw new UsageError(`${flag} ${text.trim()} is above the bound of ${maximum} ${why}`)
  return number
}

/**
 * The `--cache-probe` URL: http(s), no credentials (a key belongs in `--probe-key-env`), no
 * query or fragment (the request path is appended to it). Messages show the URL without its
 * credentials and query.
 */
function probeURL(text: string): string {
  let url: URL | undefined
  try {
    url = new URL(text)
  } catch {
    url = undefined
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || !url.host) {
    // Unparsable: nothing can be stripped, so credentials-looking text is cut out before quoting.
    throw new UsageError(
      `--cache-probe must be the http(s) base URL of the endpoint, got ${JSON.stringify(text.replace(/\/\/[^/\s]*@/, '//…@'))}`,
    )
  }
  const shown = `${url.protocol}//${url.host}${url.pathname}`
  if (url.username || url.password) {
    throw new UsageError(
      `--cache-probe must not carry credentials (user:password@); put the API key in an environment variable and name it with --probe-key-env; got ${shown} with credentials`,
    )
  }
  if (url.search || url.hash)
    throw new UsageError(
      `--cache-probe must be a base URL without a query or fragment (requests go to {URL}/chat/completions), got ${shown} with ${url.search ? 'a query' : 'a fragment'}`,
    )
  return text
}

/** A number of seconds from `minimum` to `maximum` (`range` says both in the message). */
function boundedSeconds(flag: string, text: string, minimum: number, maximum: number, range: string): number {
  const seconds = Number(text)
  if (text.trim() === '' || !Number.isFinite(seconds) || seconds < minimum || seconds > maximum) {
    throw new UsageError(`${flag} must be a number of seconds from ${range}, got ${JSON.stringify(text)}`)
  }
  return seconds
}

function probeTimeout(text: string): number {
  return boundedSeconds(
    '--probe-timeout',
    text,
    0.001,
    MAX_PROBE_TIMEOUT_SECONDS,
    `0.001 to ${MAX_PROBE_TIMEOUT_SECONDS}`,
  )
}

function virtualSeconds(flag: string, text: string): number {
  return boundedSeconds(flag, text, 0, MAX_VIRTUAL_SECONDS, `0 to ${MAX_VIRTUAL_SECONDS} (30 days)`)
}

function oneOf<T extends string>(flag: string, text: string, allowed: readonly T[]): T {
  if (!allowed.includes(text as T))
    throw new UsageError(`${flag} must be one of ${allowed.join(', ')}, got ${JSON.stringify(text)}`)
  return text as T
}
