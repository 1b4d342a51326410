import type { ConfigParser } from '@warmfold/llm'
import { integerSchema, millisecondsSchema } from '@warmfold/llm'
import type { AdapterModelConfig, ApiKeySource, AttemptLimits } from '@warmfold/llm/adapter'
import { adapterConfigParser, attemptLimitsSchema, resolveAdapterApiKey } from '@warmfold/llm/adapter'
import Schema from 'schemastery'

/** OpenAI's `prompt_cache_retention` values. */
export type PromptCacheRetention = 'in_memory' | '24h'

/**
 * The cache lifetime each retention implies, in ms. `in_memory`: "cached prefixes generally remain
 * active for 5 to 10 minutes of inactivity, up to a maximum of one hour" — the lower bound, so idle
 * compaction never counts on a prefix that may be gone. `24h`: "up to a maximum of 24 hours"
 * (https://platform.openai.com/docs/guides/prompt-caching#prompt-cache-retention).
 */
export const PROMPT_CACHE_RETENTION_TTL_MS: Readonly<Record<PromptCacheRetention, number>> = Object.freeze({
  in_memory: 5 * 60_000,
  '24h': 24 * 60 * 60_000,
})

/** What the adapter knows about one model. */
export interface ResponsesModelConfig extends AdapterModelConfig {
  /** `max_output_tokens` of a request that sets no `maxTokens`; absent, the field is left out (the API's default). */
  readonly defaultMaxTokens?: number
  /** `reasoning.effort` values the model accepts (OpenAI's own strings: `minimal`, `low`, `medium`, `high`, …). */
  readonly efforts?: readonly string[]
  /**
   * `prompt_cache_retention` sent with every request to this model; absent,
   * none is sent (the organization's default).
   */
  readonly cacheRetention?: PromptCacheRetention
  /** How long this model's cached prefix lives unused, in ms; default from `cacheRetention` (unknown without one). */
  readonly cacheTtlMs?: number
}

/** `reasoning.summary`: which summary of its reasoning the model streams back; `none` asks for none. */
export type ReasoningSummary = 'auto' | 'concise' | 'detailed' | 'none'

/** The parsed config of `OpenAIResponsesAdapter`; `apiKeyEnv` defaults to `'OPENAI_API_KEY'` without `apiKey`. */
export interface OpenAIResponsesConfig extends ApiKeySource, AttemptLimits {
  /** Provider id the adapter registers under; default `'openai'`. */
  readonly provider: string
  /** API base URL including `/v1`; omitted, the SDK's default (`OPENAI_BASE_URL`, else `https://api.openai.com/v1`). */
  readonly baseURL?: string
  /** Known models by id. */
  readonly models: { readonly [model: string]: ResponsesModelConfig }
  /** `reasoning.summary` of requests that set a `reasoningEffort`; default `auto`. */
  readonly reasoningSummary: ReasoningSummary
  /**
   * `prompt_cache_key`: `session` (default) sends `promptCacheKeyFor(sessionId)` (`@warmfold/llm`: `warmfold-` and a
   * hash of the session id) on every request that names a session; `off` sends none.
   */
  readonly promptCacheKey: 'session' | 'off'
}

/** The environment variable read when the config names neither `apiKey` nor `apiKeyEnv`. */
export const DEFAULT_API_KEY_ENV = 'OPENAI_API_KEY'

const retention = Schema.union([Schema.const('in_memory'), Schema.const('24h')])

const modelSchema = Schema.object({
  contextWindow: integerSchema(1).required().description('Maximum prompt + output tokens.'),
  defaultMaxTokens: integerSchema(1).description('max_output_tokens when a request sets none; default none sent.'),
  efforts: Schema.array(Schema.string()).description('Accepted reasoning.effort values.'),
  defaultEffort: Schema.string().description('Effort used when a request names none.'),
  cacheRetention: retention.description('prompt_cache_retention sent for this model; default none.'),
  cacheTtlMs: millisecondsSchema(1).description(
    "Cache lifetime of this model's prefix in ms; default from cacheRetention.",
  ),
})

const schema = Schema.object({
  provider: Schema.string().default('openai').description('Provider id the adapter registers under.'),
  baseURL: Schema.string().description(
    "API base URL incl. /v1; default the SDK's (OPENAI_BASE_URL, else https://api.openai.com/v1).",
  ),
  apiKey: Schema.string().role('secret').description('The API key (exclusive with apiKeyEnv).'),
  apiKeyEnv: Schema.string().description(
    `Environment variable holding the key; default ${DEFAULT_API_KEY_ENV} when neither is set.`,
  ),
  models: Schema.dict(modelSchema).default({}).description('Known models by id.'),
  reasoningSummary: Schema.union([
    Schema.const('auto'),
    Schema.const('concise'),
    Schema.const('detailed'),
    Schema.const('none'),
  ])
    .default('auto')
    .description('reasoning.summary of requests with a reasoningEffort.'),
  promptCacheKey: Schema.union([Schema.const('session'), Schema.const('off')])
    .default('session')
    .description('prompt_cache_key: derived from the session id, or none.'),
  ...attemptLimitsSchema(600_000),
})

/**
 * Parses and validates the config: unknown keys (also inside a model), `apiKey` with `apiKeyEnv`,
 * empty strings, a bad `baseURL`,
 * and a `defaultEffort` outside `efforts` fail with a `TypeError` naming the key (never a key value).
 */
export const parseResponsesConfig: ConfigParser<OpenAIResponsesConfig> = adapterConfigParser(
  'OpenAIResponsesAdapter',
  schema,
  DEFAULT_API_KEY_ENV,
  (config: OpenAIResponsesConfig, fail) => {
    for (const [id, model] of Object.entries(config.models)) {
      if (model.defaultEffort !== undefined && !(model.efforts ?? []).includes(model.defaultEffort)) {
        fail(`models["${id}"].defaultEffort "${model.defaultEffort}" must be one of models["${id}"].efforts`)
      }
    }
  },
)

/** The API key the config points at (see `resolveAdapterApiKey` of `@warmfold/llm/adapter`). */
export const resolveApiKey = (config: ApiKeySource, env = process.env): string =>
  resolveAdapterApiKey('OpenAIResponsesAdapter', 'OpenAI', config, DEFAULT_API_KEY_ENV, env)
