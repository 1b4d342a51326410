import { canonicalJson } from './canonical-json.ts'

/**
 * The cache-relevant controls of a call: everything besides the prompt that decides which
 * provider cache family a request lands in, plus the output budget.
 *
 * `reasoningEffort`, `temperature` and `stop` shape the prompt or its cache family (DeepSeek
 * V4 renders the effort as text at token 0). `maxTokens` is an output budget and never changes
 * prompt bytes.
 */
export interface CallConfig {
  /** Provider id an adapter was registered under, e.g. `deepseek`. */
  readonly provider: string
  /** Model id as the adapter knows it. */
  readonly model: string
  /** One of the model's advertised efforts (e.g. `low`, `high`, `max`). */
  readonly reasoningEffort?: string
  /** Sampling temperature. */
  readonly temperature?: number
  /** Stop sequences, in order. */
  readonly stop?: readonly string[]
  /** Output cap in tokens. */
  readonly maxTokens?: number
}

/** The keys of {@link CallConfig}, in a fixed order. */
export const CALL_CONFIG_KEYS = ['provider', 'model', 'reasoningEffort', 'temperature', 'stop', 'maxTokens'] as const

/** Picks exactly the {@link CallConfig} fields from a larger object, dropping undefined ones. */
export function pickCallConfig(source: CallConfig): CallConfig {
  const config: Record<string, unknown> = {}
  for (const key of CALL_CONFIG_KEYS) {
    if (source[key] !== undefined) config[key] = source[key]
  }
  return config as unknown as CallConfig
}

/**
 * Whether two call configs are equal field by field (an absent field equals only an absent
 * field; `stop` compares element-wise).
 */
export function callConfigEquals(left: CallConfig, right: CallConfig): boolean {
  return canonicalJson(pickCallConfig(left)) === canonicalJson(pickCallConfig(right))
}
