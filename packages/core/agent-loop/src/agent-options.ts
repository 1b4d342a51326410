import type { CallConfig, NumberRange } from '@warmfold/llm'
import { integerRange, millisecondsRange, numberProblem, showValue } from '@warmfold/llm'

/**
 * Options of `ctx.agentLoop.create`: the conversation route and its call controls (an omitted
 * `reasoningEffort` or `maxTokens` per request is the adapter's default, materialized and logged), and the loop's own.
 */
export interface AgentOptions extends CallConfig {
  /** System prompt. */
  readonly system?: string
  /** Steps (requests) per turn before the turn ends with `max-steps`; default 200. */
  readonly maxSteps?: number
  /** Default tool timeout in milliseconds; default 120000. */
  readonly toolTimeoutMs?: number
  /**
   * Retries of one step that `agent/request-error` listeners may ask for; default 8, `0`
   * disables retries. A bound against a listener that asks again and again: the listeners
   * decide (overflow recovery grants `maxOverflowRetries`, and only after real progress).
   */
  readonly maxStepRetries?: number
}

/** Default `maxSteps`. */
export const DEFAULT_MAX_STEPS = 200
/** Default `toolTimeoutMs`. */
export const DEFAULT_TOOL_TIMEOUT_MS = 120_000
/** Default `maxStepRetries`. */
export const DEFAULT_MAX_STEP_RETRIES = 8

/**
 * Checks agent options and returns a frozen copy.
 * @throws TypeError naming the option and the bad value.
 */
export function validateAgentOptions(options: AgentOptions): AgentOptions {
  if (typeof options?.provider !== 'string' || options.provider === '')
    throw bad('provider', 'must be a non-empty string', options?.provider)
  if (typeof options.model !== 'string' || options.model === '')
    throw bad('model', 'must be a non-empty string', options.model)
  if (options.reasoningEffort !== undefined && typeof options.reasoningEffort !== 'string')
    throw bad('reasoningEffort', 'must be a string', options.reasoningEffort)
  if (options.temperature !== undefined) check('temperature', options.temperature, TEMPERATURE_RANGE)
  if (
    options.stop !== undefined &&
    (!Array.isArray(options.stop) || options.stop.some((item) => typeof item !== 'string'))
  ) {
    throw bad('stop', 'must be an array of strings', options.stop)
  }
  for (const key of ['maxTokens', 'maxSteps'] as const)
    if (options[key] !== undefined) check(key, options[key], integerRange(1))
  // A timer: above Node's limit a tool would time out after 1 ms.
  if (options.toolTimeoutMs !== undefined) check('toolTimeoutMs', options.toolTimeoutMs, millisecondsRange(1))
  if (options.maxStepRetries !== undefined) check('maxStepRetries', options.maxStepRetries, integerRange())
  if (options.system !== undefined && typeof options.system !== 'string')
    throw bad('system', 'must be a string', options.system)
  return Object.freeze({ ...options, ...(options.stop ? { stop: Object.freeze([...options.stop]) } : {}) })
}

/** The `TypeError` for an agent (or fork) option `key` that breaks `rule`. */
export function bad(key: string, rule: string, value: unknown, of = 'agent'): TypeError {
  return new TypeError(`${of} option ${key} ${rule}, got ${showValue(value)}`)
}

/**
 * The range of `temperature`: the widest any provider documents (OpenAI and Gemini 0–2,
 * Anthropic 0–1); the provider refuses what its own range does not hold.
 */
export const TEMPERATURE_RANGE: NumberRange = Object.freeze({ min: 0, max: 2 })

/**
 * Throws for an agent (or fork) option `key` whose `value` is not a finite number in `range`.
 * @throws TypeError `agent option <key> must be <range>, got <value>`.
 */
export function check(key: string, value: unknown, range: NumberRange, of = 'agent'): void {
  const problem = numberProblem(key, value, range)
  if (problem) throw new TypeError(`${of} option ${problem}`)
}
