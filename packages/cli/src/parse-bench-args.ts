import { EFFORTS, PROFILE_SYNTAX, PRUNERS, parseCacheProfile, STRATEGIES } from '@warmfold/prefix-cache-testkit'
import type { WorkloadPruner, WorkloadStrategy } from '@warmfold/prefix-cache-testkit'
import type { Dialect } from '@warmfold/llm-openai-compatible'
import { DIALECTS } from '@warmfold/llm-openai-compatible'
import { UsageError } from './usage-error.ts'

/** Where cached tokens come from: the simulator, the embedded llama.cpp KV cache, or an endpoint. */
export type CacheSource =
  | { kind: 'simulator' }
  | { kind: 'llama' }
  | { kind: 'probe'; url: string; model: string; dialect: Dialect; keyEnv?: string }

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
  json: boolean
  out?: string
  cache: CacheSource
  help: boolean
}

/** Windows that fit the embedded llama cache server's context (its tiny vocabulary makes about 2.8 tokens per simulated token). */
export const LLAMA_WINDOWS = [8000, 16000]

export const BENCH_USAGE = `Usage: warmfold bench [options]

Runs the scripted coding workload for each window × strategy through the real agent loop,
token meter, pruner and compaction engine, and prints the prefix-cache economics.

Options:
  --windows LIST        context windows in tokens, comma-separated (default 32000,128000,512000)
  --steps N             tool steps before the final answer (default 60)
  --strategies LIST     warmfold,legacy,cold (default all three)
  --effort E            conversation reasoning effort: ${EFFORTS.join(' | ')} (default max)
  --temperature T       conversation temperature (default unset)
  --stop S              a stop sequence (repeat the flag for several; default none)
  --profile P           simulated cache: ${PROFILE_SYNTAX} (default bytes)
  --pruner P            ${PRUNERS.join(' | ')} (default rewrite-only)
  --summary-route R     send summary calls to provider/model
  --json                print one JSON document on stdout instead of the table
  --out FILE            also write the JSON document to FILE
  --cache llama         measure cached tokens with a real llama.cpp KV cache (embedded server, a fresh
                        one per run; default windows ${LLAMA_WINDOWS.join(',')}; takes minutes on 2 cores)
  --cache-probe URL     measure cached tokens at an OpenAI-compatible endpoint (llama-server, vLLM,
                        DeepSeek, ...): every request is also sent there with a 1-token output cap
  --probe-model M       model id sent to the endpoint (default probe)
  --probe-dialect D     ${DIALECTS.join(' | ')} (default llamacpp)
  --probe-key-env VAR   environment variable holding the endpoint's API key (default none)
  -h, --help            show this help

Progress goes to stderr. Exit codes: 0 ok, 1 a run failed, 2 bad flags.`

const VALUE_FLAGS = new Set(['--windows', '--steps', '--strategies', '--effort', '--temperature', '--stop', '--profile', '--pruner', '--summary-route', '--out', '--cache', '--cache-probe', '--probe-model', '--probe-dialect', '--probe-key-env'])

/**
 * Parses `warmfold bench` flags.
 * @throws UsageError naming the flag and the allowed values.
 */
export function parseBenchArgs(argv: readonly string[]): BenchArgs {
  const args: BenchArgs = { windows: [32000, 128000, 512000], steps: 60, strategies: [...STRATEGIES], effort: 'max', profile: 'bytes', pruner: 'rewrite-only', json: false, cache: { kind: 'simulator' }, help: false }
  let windowsGiven = false
  const probe = { url: undefined as string | undefined, model: 'probe', dialect: 'llamacpp' as Dialect, keyEnv: undefined as string | undefined }
  let llama = false
  for (let index = 0; index < argv.length; index++) {
    const raw = argv[index] as string
    const [flag, inline] = raw.startsWith('--') && raw.includes('=') ? [raw.slice(0, raw.indexOf('=')), raw.slice(raw.indexOf('=') + 1)] : [raw, undefined]
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
        args.windows = text.split(',').map((item) => positiveInteger('--windows', item, 4800))
        windowsGiven = true
        break
      case '--cache':
        if (text !== 'llama' && text !== 'simulator') throw new UsageError(`--cache must be one of simulator, llama, got ${JSON.stringify(text)}`)
        llama = text === 'llama'
        break
      case '--cache-probe':
        if (!/^https?:\/\/\S+$/.test(text)) throw new UsageError(`--cache-probe must be the http(s) base URL of an OpenAI-compatible endpoint, got ${JSON.stringify(text)}`)
        probe.url = text
        break
      case '--probe-model':
        if (text.trim() === '') throw new UsageError('--probe-model must not be empty')
        probe.model = text
        break
      case '--probe-dialect':
        probe.dialect = oneOf('--probe-dialect', text, DIALECTS)
        break
      case '--probe-key-env':
        if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(text)) throw new UsageError(`--probe-key-env must be an environment variable name, got ${JSON.stringify(text)}`)
        probe.keyEnv = text
        break
      case '--steps':
        args.steps = positiveInteger('--steps', text, 1)
        break
      case '--strategies':
        args.strategies = text.split(',').map((item) => oneOf('--strategies', item, STRATEGIES))
        break
      case '--effort':
        args.effort = oneOf('--effort', text, EFFORTS)
        break
      case '--temperature': {
        const number = Number(text)
        if (text.trim() === '' || !Number.isFinite(number) || number < 0) throw new UsageError(`--temperature must be a number ≥ 0, got ${JSON.stringify(text)}`)
        args.temperature = number
        break
      }
      case '--stop':
        args.stop = [...(args.stop ?? []), text]
        break
      case '--profile':
        try {
          parseCacheProfile(text)
        } catch {
          throw new UsageError(`--profile must be one of ${PROFILE_SYNTAX}, got ${JSON.stringify(text)}`)
        }
        args.profile = text
        break
      case '--pruner':
        args.pruner = oneOf('--pruner', text, PRUNERS)
        break
      case '--summary-route':
        if (!/^[^/\s]+\/[^/\s]+$/.test(text)) throw new UsageError(`--summary-route must be provider/model, got ${JSON.stringify(text)}`)
        args.summaryRoute = text
        break
      case '--out':
        args.out = text
        break
      default:
        throw new UsageError(`unknown flag ${JSON.stringify(raw)}; run warmfold bench --help for the flags`)
    }
  }
  if (args.strategies.length === 0) throw new UsageError('--strategies must name at least one strategy')
  if (llama && probe.url) throw new UsageError('--cache llama and --cache-probe are exclusive; pick one cache to measure with')
  if (!probe.url && (probe.keyEnv !== undefined || probe.model !== 'probe' || probe.dialect !== 'llamacpp')) {
    throw new UsageError('--probe-model, --probe-dialect and --probe-key-env need --cache-probe URL')
  }
  if (llama) {
    args.cache = { kind: 'llama' }
    if (!windowsGiven) args.windows = [...LLAMA_WINDOWS]
    if (args.profile !== 'bytes') throw new UsageError('--profile selects a simulated cache; it cannot be combined with --cache llama')
  } else if (probe.url) {
    args.cache = { kind: 'probe', url: probe.url, model: probe.model, dialect: probe.dialect, ...(probe.keyEnv ? { keyEnv: probe.keyEnv } : {}) }
    if (args.profile !== 'bytes') throw new UsageError('--profile selects a simulated cache; it cannot be combined with --cache-probe')
  }
  return args
}

function positiveInteger(flag: string, text: string, minimum: number): number {
  const number = Number(text)
  if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(number) || number < minimum) {
    throw new UsageError(`${flag} must be ${minimum === 1 ? 'a positive integer' : `an integer ≥ ${minimum}`}, got ${JSON.stringify(text)}`)
  }
  return number
}

function oneOf<T extends string>(flag: string, text: string, allowed: readonly T[]): T {
  if (!allowed.includes(text as T)) throw new UsageError(`${flag} must be one of ${allowed.join(', ')}, got ${JSON.stringify(text)}`)
  return text as T
}
