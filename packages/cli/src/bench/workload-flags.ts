import type {
  LatencyProfile,
  PriceProfile,
  WorkloadKind,
  WorkloadPruner,
  WorkloadStrategy,
} from '@warmfold/prefix-cache-testkit'
import {
  DEFAULT_LATENCY_PROFILE,
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
import type { FlagTable } from '../shared/command-flags.ts'
import { readLatencyProfile, readPriceProfile } from '../shared/read-profile.ts'
import { UsageError } from '../shared/usage-error.ts'
import { boundedInteger, boundedSeconds, oneOf, onOff } from '../shared/flag-values.ts'
import { DEFAULT_PRICE, MAX_STEPS, MAX_TEMPERATURE, MAX_VIRTUAL_SECONDS, MAX_WINDOW } from './bench-flag-values.ts'

const virtualSeconds = (flag: string, text: string) => boundedSeconds(flag, text, 0, MAX_VIRTUAL_SECONDS, ' (30 days)')

/** What the bounds of `--windows` and `--steps` protect, for their messages. */
const WINDOWS_WHY = "tokens (the simulator's memory grows with window × steps)"
const STEPS_WHY = "steps (the simulator's memory and time grow with window × steps)"

/** What `warmfold bench`'s workload flags set. */
export interface WorkloadFlags {
  windows: number[]
  steps: number
  strategies: readonly WorkloadStrategy[]
  effort: string
  temperature: number | undefined
  stop: string[] | undefined
  profile: string
  pruner: WorkloadPruner
  summaryRoute: string | undefined
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
}

/** The flags of `warmfold bench` that shape the scripted session and its clock. */
export const WORKLOAD_FLAGS: FlagTable<WorkloadFlags> = {
  windows: {
    value: 'LIST',
    default: [32000, 128000, 512000],
    parse: (text) => text.split(',').map((item) => boundedInteger('--windows', item, 4800, MAX_WINDOW, WINDOWS_WHY)),
    help: [`context windows in tokens, comma-separated, each 4800 to ${MAX_WINDOW}`, '(default 32000,128000,512000)'],
  },
  steps: {
    value: 'N',
    default: 60,
    parse: (text) => boundedInteger('--steps', text, 1, MAX_STEPS, STEPS_WHY),
    help: [`tool steps before the final answer, 1 to ${MAX_STEPS} (default 60)`],
  },
  strategies: {
    value: 'LIST',
    default: DEFAULT_STRATEGIES,
    parse: (text) => text.split(',').map((item) => oneOf('--strategies', item, STRATEGIES)),
    help: [
      `comma-separated: ${STRATEGIES.join(' | ')}`,
      `(default ${DEFAULT_STRATEGIES.join(',')}; the others model peer agents' summary calls)`,
    ],
  },
  effort: {
    value: 'E',
    default: 'max',
    parse: (text) => oneOf('--effort', text, EFFORTS),
    help: [`conversation reasoning effort: ${EFFORTS.join(' | ')} (default max)`],
  },
  temperature: {
    value: 'T',
    parse: (text) => {
      const number = Number(text)
      if (text.trim() === '' || !Number.isFinite(number) || number < 0 || number > MAX_TEMPERATURE)
        throw new UsageError(`--temperature must be a number from 0 to ${MAX_TEMPERATURE}, got ${JSON.stringify(text)}`)
      return number
    },
    help: [`conversation temperature, 0 to ${MAX_TEMPERATURE} (default unset)`],
  },
  stop: {
    value: 'S',
    parse: (text, values) => [...(values.stop ?? []), text],
    help: ['a stop sequence (repeat the flag for several; default none)'],
  },
  profile: {
    value: 'P',
    default: 'bytes',
    parse: (text) => {
      try {
        parseCacheProfile(text)
      } catch (error) {
        throw new UsageError(`--profile: ${(error as Error).message}`)
      }
      return text
    },
    help: [`simulated cache: ${PROFILE_SYNTAX} (default bytes)`],
  },
  pruner: {
    value: 'P',
    default: 'rewrite-only',
    parse: (text) => oneOf('--pruner', text, PRUNERS),
    help: [`${PRUNERS.join(' | ')} (default rewrite-only)`],
  },
  summaryRoute: {
    value: 'R',
    parse: (text) => {
      if (!/^[^/\s]+\/[^/\s]+$/.test(text))
        throw new UsageError(`--summary-route must be provider/model, got ${JSON.stringify(text)}`)
      return text
    },
    help: ['send summary calls to provider/model'],
  },
  price: {
    value: 'P',
    default: PRICE_PROFILES[DEFAULT_PRICE],
    parse: readPriceProfile,
    help: [
      `what tokens cost: ${PRICE_SYNTAX} with the keys cacheRead,`,
      'cacheWrite, output (multipliers of an uncached input token) and optional',
      `usdPerMillionInput (default ${DEFAULT_PRICE})`,
    ],
  },
  latency: {
    value: 'P',
    default: LATENCY_PROFILES[DEFAULT_LATENCY_PROFILE],
    parse: readLatencyProfile,
    help: [
      `how long requests take: ${LATENCY_SYNTAX} with the keys`,
      'ttftMs, prefillTokensPerSecond, cachedTokensPerSecond, decodeTokensPerSecond',
      `(default ${DEFAULT_LATENCY_PROFILE}): every simulated request takes its time on a`,
      "virtual clock, so the wait column and --json's stall are in seconds",
    ],
  },
  backgroundFold: {
    value: 'on|off',
    default: true,
    parse: (text) => onOff('--background-fold', text),
    help: [
      'warmfold summarizes beside the conversation from its soft threshold on and',
      'swaps the checkpoint in at a request boundary, instead of blocking the turn',
      'for the summary call (default on)',
    ],
  },
  prewarm: {
    value: 'on|off',
    default: false,
    parse: (text) => onOff('--prewarm', text),
    help: [
      "after a background fold's swap, write the post-swap prefix with a 1-token",
      'request before the next conversation request reads it (default off)',
    ],
  },
  workload: {
    value: 'W',
    default: 'reading',
    parse: (text) => oneOf('--workload', text, WORKLOAD_KINDS),
    help: [
      'what the scripted session does: reading (reads one module per step; the cache',
      'economics) | coding (fixes failing tests: paths, commands, compiler and test',
      'output, diffs, user corrections, summarized by a seeded lossy summarizer;',
      "every summary call's fold audit is in --json) (default reading)",
    ],
  },
  artifactTrail: {
    value: 'on|off',
    default: true,
    parse: (text) => onOff('--artifact-trail', text),
    help: ["warmfold's artifact trail, written by code into every checkpoint (default on)"],
  },
  turns: {
    value: 'N',
    default: 1,
    parse: (text) => boundedInteger('--turns', text, 1, MAX_STEPS, 'turns (at most --steps)'),
    help: ['split the steps across N user turns, 1 to --steps (default 1)'],
  },
  idleSeconds: {
    name: 'idle',
    value: 'S',
    default: 0,
    parse: (text) => virtualSeconds('--idle', text),
    help: [
      "virtual seconds between a turn's answer and the next user message, during",
      'which cache entries may expire (default 0)',
    ],
  },
  idleCompaction: {
    value: 'on|off',
    default: true,
    parse: (text) => onOff('--idle-compaction', text),
    help: [
      'warmfold folds while the cache is warm when the agent goes idle between',
      'turns under pressure (default on; reference strategies never do)',
    ],
  },
  stepSeconds: {
    value: 'S',
    default: 15,
    parse: (text) => virtualSeconds('--step-seconds', text),
    help: ['virtual seconds each tool call takes between model requests (default 15)'],
  },
}
