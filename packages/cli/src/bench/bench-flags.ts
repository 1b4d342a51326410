import type { CommandFlags } from '../shared/command-flags.ts'
import type { StoreSpec } from '../shared/session-store-spec.ts'
import { parseStoreSpec, STORE_SYNTAX } from '../shared/session-store-spec.ts'
import { UsageError } from '../shared/usage-error.ts'
import { boundedSeconds, oneOf } from '../shared/flag-values.ts'
import {
  DEFAULT_PROBE_TIMEOUT_SECONDS,
  LLAMA_WINDOWS,
  MAX_PROBE_TIMEOUT_SECONDS,
  probeURL,
} from './bench-flag-values.ts'
import { PROBE_DIALECTS } from './probe-dialects.ts'
import type { ProbeDialect } from './probe-dialects.ts'
import type { WorkloadFlags } from './workload-flags.ts'
import { WORKLOAD_FLAGS } from './workload-flags.ts'

/** What `warmfold bench`'s flags set, before the checks across flags make the `BenchArgs`. */
export interface BenchFlags extends WorkloadFlags {
  json: boolean
  out: string | undefined
  /** Folder each run's session log is written to, as `<strategy>-<window>.jsonl` (`--keep-sessions`). */
  keepSessions: string | undefined
  store: StoreSpec | undefined
  cache: 'simulator' | 'llama'
  probeUrl: string | undefined
  probeModel: string
  probeDialect: ProbeDialect
  probeKeyEnv: string | undefined
  probeTimeout: number | undefined
  help: boolean
}

/** `warmfold bench`'s flags: the table that parses them and prints `--help`. */
export const BENCH_FLAGS: CommandFlags<BenchFlags> = {
  command: 'bench',
  synopsis: `Usage: warmfold bench [options]

Runs the scripted coding workload for each window × strategy through the real agent loop,
token meter, pruner and compaction engine, and prints the prefix-cache economics.`,
  footer: `Progress goes to stderr. Exit codes: 0 ok, 1 a run failed (or the probed endpoint failed: its
answer is printed), 2 bad flags.`,
  column: 22,
  positionals: false,
  flags: {
    ...WORKLOAD_FLAGS,
    json: { default: false, help: ['print one JSON document on stdout instead of the table'] },
    out: {
      value: 'FILE',
      help: ['also write the JSON document to FILE (checked before the run; its folder', 'must exist)'],
    },
    keepSessions: {
      value: 'DIR',
      parse: (text, values) => {
        if (values.store !== undefined)
          throw new UsageError('--keep-sessions DIR and --store are exclusive: --keep-sessions DIR is --store file:DIR')
        return text
      },
      help: [
        "write each run's session log to DIR/<strategy>-<window>.jsonl, for warmfold",
        'report (checked before the run: DIR must exist, the files must not)',
      ],
    },
    store: {
      value: STORE_SYNTAX,
      parse: (text, values) => {
        if (values.keepSessions !== undefined || values.store !== undefined)
          throw new UsageError('--store is given twice, or with --keep-sessions DIR (which is --store file:DIR)')
        return parseStoreSpec('--store', text)
      },
      help: [
        "keep each run's session, as <strategy>-<window>, in that store (file:DIR is",
        '--keep-sessions DIR; sqlite and postgres need their store package installed;',
        'checked before the run: no such session may exist there)',
      ],
    },
    cache: {
      value: 'llama',
      default: 'simulator',
      parse: (text) => oneOf('--cache', text, ['simulator', 'llama'] as const),
      help: [
        'measure cached tokens with a real llama.cpp KV cache (embedded server, a fresh',
        `one per run; default windows ${LLAMA_WINDOWS.join(',')}; takes minutes on 2 cores)`,
      ],
    },
    probeUrl: {
      name: 'cache-probe',
      value: 'URL',
      parse: probeURL,
      help: [
        'measure cached tokens at a real endpoint (llama-server, vLLM, DeepSeek, OpenAI,',
        'Anthropic, Gemini, ...): every request is also sent there with a 1-token',
        'output cap',
      ],
    },
    probeModel: {
      value: 'M',
      default: 'probe',
      parse: (text) => {
        if (text.trim() === '') throw new UsageError('--probe-model must not be empty')
        return text
      },
      help: ['model id sent to the endpoint (default probe)'],
    },
    probeDialect: {
      value: 'D',
      default: 'llamacpp',
      parse: (text) => oneOf('--probe-dialect', text, PROBE_DIALECTS),
      help: [
        PROBE_DIALECTS.join(' | '),
        '(default llamacpp; the chat completions dialects are built in, the other wire',
        'formats need their adapter package installed)',
      ],
    },
    probeKeyEnv: {
      value: 'VAR',
      parse: (text) => {
        if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(text))
          throw new UsageError(`--probe-key-env must be an environment variable name, got ${JSON.stringify(text)}`)
        return text
      },
      help: ["environment variable holding the endpoint's API key (default none)"],
    },
    probeTimeout: {
      value: 'S',
      parse: (text) => boundedSeconds('--probe-timeout', text, 0.001, MAX_PROBE_TIMEOUT_SECONDS),
      help: [
        `seconds to wait for each probed response, 0.001 to ${MAX_PROBE_TIMEOUT_SECONDS}`,
        `(default ${DEFAULT_PROBE_TIMEOUT_SECONDS}; raise it for a slow local server)`,
      ],
    },
    help: { short: 'h', default: false, help: ['show this help'] },
  },
}
