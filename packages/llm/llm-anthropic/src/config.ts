import type { CachePrices, ConfigParser } from '@warmfold/llm'
import { integerSchema, millisecondsSchema } from '@warmfold/llm'
import type { AdapterModelConfig, ApiKeySource, AttemptLimits } from '@warmfold/llm/adapter'
import { adapterConfigParser, attemptLimitsSchema, resolveAdapterApiKey } from '@warmfold/llm/adapter'
import Schema from 'schemastery'

/** What the adapter knows about one Anthropic model. */
export interface AnthropicModelConfig extends AdapterModelConfig {
  /** `max_tokens` of a request that sets no `maxTokens` (Anthropic requires one on every request). */
  readonly defaultMaxTokens: number
  /**
   * Reasoning efforts the model accepts: `'off'` or keys of `thinkingBudgets`. Omitted or empty, the model
   * advertises no reasoning controls and `ctx.llm` does not validate efforts for it.
   */
  readonly efforts?: readonly string[]
  /**
   * TTL of this model's `cache_control` breakpoints (`'5m'` or `'1h'`); default the adapter's
   * `cacheTtl`. Every breakpoint of one request carries the same TTL.
   */
  readonly cacheTtl?: AnthropicCacheTtl
  /**
   * How long the provider keeps this model's cached prefix unused, in ms; default
   * from the model's `cacheTtl` (5 min or 1 h).
   */
  readonly cacheTtlMs?: number
}

/** Cache lifetime of every breakpoint the adapter places. */
export type AnthropicCacheTtl = '5m' | '1h'

/** Milliseconds of each `cacheTtl`: Anthropic keeps an entry this long after its last use (every hit refreshes it). */
export const CACHE_TTL_MS: Readonly<Record<AnthropicCacheTtl, number>> = Object.freeze({
  '5m': 5 * 60_000,
  '1h': 60 * 60_000,
})

/**
 * Anthropic's cache prices per uncached input token for each `cacheTtl` (its pricing page): a read
 * 0.1×, a write 1.25× for 5-minute entries and 2× for 1-hour ones. Reported as
 * `ModelInfo.cachePrices`, so the compaction engine weighs a rewrite of cached history at them.
 */
export const CACHE_PRICES: Readonly<Record<AnthropicCacheTtl, CachePrices>> = Object.freeze({
  '5m': Object.freeze({ read: 0.1, write: 1.25 }),
  '1h': Object.freeze({ read: 0.1, write: 2 }),
})

/**
 * The parsed config of `AnthropicAdapter`; `apiKeyEnv` is `'ANTHROPIC_API_KEY'` when neither it nor
 * `apiKey` is set, and a 529 counts as retryable.
 */
export interface AnthropicAdapterConfig extends ApiKeySource, AttemptLimits {
  /** Provider id the adapter registers under; default `'anthropic'`. */
  readonly provider: string
  /** API base URL; omitted, the SDK's default (`ANTHROPIC_BASE_URL`, else `https://api.anthropic.com`). */
  readonly baseURL?: string
  /** Known models by id. */
  readonly models: { readonly [model: string]: AnthropicModelConfig }
  /** `budget_tokens` of extended thinking for each effort. Effort `'off'` or none sends no thinking. */
  readonly thinkingBudgets: { readonly [effort: string]: number }
  /** TTL of the `cache_control` breakpoints of every model that sets no `cacheTtl` of its own. */
  readonly cacheTtl: AnthropicCacheTtl
}

/** The environment variable read when the config names neither `apiKey` nor `apiKeyEnv`. */
export const DEFAULT_API_KEY_ENV = 'ANTHROPIC_API_KEY'

/** Default `thinkingBudgets`. */
export const DEFAULT_THINKING_BUDGETS: { readonly [effort: string]: number } = Object.freeze({
  low: 2048,
  high: 8192,
  max: 24576,
})

/** The effort that never enables thinking. */
export const THINKING_OFF = 'off'

const cacheTtlSchema = Schema.union([Schema.const('5m'), Schema.const('1h')])

const modelSchema = Schema.object({
  contextWindow: integerSchema(1).required().description('Maximum prompt + output tokens.'),
  defaultMaxTokens: integerSchema(1).required().description('max_tokens when a request sets none.'),
  efforts: Schema.array(Schema.string()).description("Accepted efforts: 'off' or keys of thinkingBudgets."),
  defaultEffort: Schema.string().description('Effort used when a request names none.'),
  cacheTtl: cacheTtlSchema.description(
    "TTL of this model's cache_control breakpoints; default the adapter's cacheTtl.",
  ),
  cacheTtlMs: millisecondsSchema(1).description(
    "Cache lifetime of this model's prefix in ms; default from the model's cacheTtl.",
  ),
})

const schema = Schema.object({
  provider: Schema.string().default('anthropic').description('Provider id the adapter registers under.'),
  baseURL: Schema.string().description(
    "API base URL; default the SDK's (ANTHROPIC_BASE_URL, else https://api.anthropic.com).",
  ),
  apiKey: Schema.string().role('secret').description('The API key (exclusive with apiKeyEnv).'),
  apiKeyEnv: Schema.string().description(
    `Environment variable holding the key; default ${DEFAULT_API_KEY_ENV} when neither is set.`,
  ),
  models: Schema.dict(modelSchema).default({}).description('Known models by id.'),
  thinkingBudgets: Schema.dict(integerSchema(1))
    .default({ ...DEFAULT_THINKING_BUDGETS })
    .description('budget_tokens per effort.'),
  cacheTtl: cacheTtlSchema
    .default('5m')
    .description('TTL of the cache_control breakpoints of every model that sets no cacheTtl of its own.'),
  ...attemptLimitsSchema(600_000, ' (pings do not count)'),
})

/**
 * Parses and validates the `AnthropicAdapter` config: unknown keys (also inside a model entry),
 * `apiKey` together with `apiKeyEnv`, empty strings, a `thinkingBudgets` entry named `'off'`, and
 * efforts the budgets do not define fail with a `TypeError` naming the key. The key itself is
 * never part of a message. Reading the environment variable happens when the plugin loads.
 */
export const parseAnthropicConfig: ConfigParser<AnthropicAdapterConfig> = adapterConfigParser(
  'AnthropicAdapter',
  schema,
  DEFAULT_API_KEY_ENV,
  (config: AnthropicAdapterConfig, fail) => {
    if (Object.hasOwn(config.thinkingBudgets, THINKING_OFF))
      fail(`thinkingBudgets.${THINKING_OFF} is reserved: effort '${THINKING_OFF}' never sends thinking`)
    const budgets = Object.keys(config.thinkingBudgets)
    for (const [id, model] of Object.entries(config.models)) {
      for (const effort of model.efforts ?? []) {
        if (effort !== THINKING_OFF && !budgets.includes(effort)) {
          fail(
            `models["${id}"].efforts: "${effort}" has no entry in thinkingBudgets (known: ` +
              `${[THINKING_OFF, ...budgets].join(', ')})`,
          )
        }
      }
      if (model.defaultEffort !== undefined && !(model.efforts ?? []).includes(model.defaultEffort)) {
        fail(`models["${id}"].defaultEffort "${model.defaultEffort}" must be one of models["${id}"].efforts`)
      }
    }
  },
)

/** The API key the config points at (see `resolveAdapterApiKey` of `@warmfold/llm/adapter`). */
export const resolveApiKey = (config: ApiKeySource, env = process.env): string =>
  resolveAdapterApiKey('AnthropicAdapter', 'Anthropic', config, DEFAULT_API_KEY_ENV, env)
