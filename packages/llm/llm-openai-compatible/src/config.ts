import type { ConfigParser } from '@warmfold/llm'
import { deepFreeze, integerSchema, millisecondsSchema, strictConfig, unknownKeyMessage } from '@warmfold/llm'
import type { AdapterModelConfig, ApiKeySource, AttemptLimits } from '@warmfold/llm/adapter'
import { normalizeApiKey } from '@warmfold/llm/adapter'
import Schema from 'schemastery'
import type { PromptCacheKeyMode, PromptCacheRetention } from './cache-controls.ts'
import { PROMPT_CACHE_RETENTIONS } from './cache-controls.ts'

/**
 * Which server family the endpoint is. It decides the effort fields, whether reasoning is
 * replayed as `reasoning_content`, and the name of the output cap (see the README's tables).
 */
export type Dialect = 'deepseek' | 'openai' | 'vllm' | 'llamacpp' | 'generic'

/** The dialects, in documentation order. */
export const DIALECTS: readonly Dialect[] = ['deepseek', 'openai', 'vllm', 'llamacpp', 'generic']

/** What the adapter knows about one model (becomes its `ModelInfo`). */
export interface ModelConfig extends AdapterModelConfig {
  /**
   * How long the server keeps this model's cached prefix unused, in ms; default 24 h with
   * `promptCacheRetention: '24h'`, else the dialect's (`DIALECT_CACHE_TTL_MS`).
   */
  readonly cacheTtlMs?: number
  /** Sent as `prompt_cache_retention` (OpenAI: `in_memory` or `24h`); absent, not sent (the server's default). */
  readonly promptCacheRetention?: PromptCacheRetention
  /**
   * Explicit cache breakpoints (OpenAI GPT-5.6 and later): `prompt_cache_options: {mode:
   * 'explicit'}` and a `prompt_cache_breakpoint` on the system prompt and on the last message
   * (a summary call's: the one before its instruction). Default false.
   */
  readonly cacheBreakpoints?: boolean
}

/**
 * The TTL `promptCacheRetention: '24h'` implies: OpenAI keeps
 * extended-retention prefixes "up to a maximum of 24 hours".
 */
export const EXTENDED_RETENTION_TTL_MS = 24 * 3_600_000

/**
 * How long each dialect's server keeps an unused cached prefix, in ms, when a model sets none:
 * DeepSeek clears unused disk cache "usually within a few hours to a few days" (3 h, the lower
 * end, as the test kit's `deepseek` profile); OpenAI keeps in-memory entries "5 to 10 minutes of
 * inactivity" (5 min; set the model's `cacheTtlMs` for 24-hour extended retention). vLLM,
 * llama.cpp and generic servers evict by memory pressure, not by time: no TTL, so nothing that
 * needs one (idle compaction) runs for them unless a model sets it.
 */
export const DIALECT_CACHE_TTL_MS: Readonly<Partial<Record<Dialect, number>>> = Object.freeze({
  deepseek: 3 * 3_600_000,
  openai: 5 * 60_000,
})

/** `OpenAICompatibleAdapter` config, with defaults applied. */
export interface OpenAICompatibleConfig extends ApiKeySource, AttemptLimits {
  /** Provider id the adapter is registered under, e.g. `deepseek`. Required. */
  readonly provider: string
  /** Endpoint base URL, e.g. `https://api.deepseek.com` (requests go to `{baseURL}/chat/completions`). Required. */
  readonly baseURL: string
  /** Server family; default `generic`. */
  readonly dialect: Dialect
  /** Model id → model facts. At least one model. */
  readonly models: Readonly<Record<string, ModelConfig>>
  /** Longest single wait between two attempts, `retry-after` included; default 60000. */
  readonly maxRetryWaitMs: number
  /** Extra static HTTP headers sent with every request; default none. */
  readonly headers: Readonly<Record<string, string>>
  /**
   * `session`: send a `prompt_cache_key` derived from the request's `sessionId` (a hash, no
   * user data); `off`: send none. Default `session` for dialect `openai`, `off` for the others.
   */
  readonly promptCacheKey?: PromptCacheKeyMode
}

/** The `promptCacheKey` a dialect uses when the config sets none. */
export function defaultPromptCacheKey(dialect: Dialect): PromptCacheKeyMode {
  return dialect === 'openai' ? 'session' : 'off'
}

/** The config a host writes: {@link OpenAICompatibleConfig} with the defaulted keys optional. */
export type OpenAICompatibleOptions = Pick<OpenAICompatibleConfig, 'provider' | 'baseURL' | 'models'> &
  Partial<Omit<OpenAICompatibleConfig, 'provider' | 'baseURL' | 'models'>>

/** Parses a host's config (anything at run time) into the resolved config; `schema` is the schemastery schema. */
export type OpenAICompatibleConfigParser = ConfigParser<OpenAICompatibleConfig, OpenAICompatibleOptions>

const OWNER = 'OpenAICompatibleAdapter'
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/

const modelSchema = Schema.object({
  contextWindow: integerSchema(1).required().description('Maximum prompt + output tokens.'),
  defaultMaxTokens: integerSchema(1).description('Output cap when a request names none.'),
  efforts: Schema.array(Schema.string()).description('Accepted reasoning efforts.'),
  defaultEffort: Schema.string().description('Effort used when a request names none (one of efforts).'),
  cacheTtlMs: millisecondsSchema(1).description(
    "Cache lifetime of this model's prefix in ms; default 24 h with promptCacheRetention 24h, else the dialect's.",
  ),
  promptCacheRetention: Schema.union(PROMPT_CACHE_RETENTIONS as PromptCacheRetention[]).description(
    'prompt_cache_retention to send: in_memory or 24h. Default: not sent.',
  ),
  cacheBreakpoints: Schema.boolean().description('Explicit cache breakpoints (OpenAI GPT-5.6+). Default false.'),
})
const MODEL_KEYS = Object.keys(modelSchema.dict ?? {})

const schema = Schema.object({
  provider: Schema.string().required().description('Provider id to register, e.g. "deepseek". Required.'),
  baseURL: Schema.string().required().description('Endpoint base URL, e.g. "https://api.deepseek.com". Required.'),
  apiKey: Schema.string().role('secret').description('API key (prefer apiKeyEnv). Default: none.'),
  apiKeyEnv: Schema.string().description('Environment variable holding the API key. Default: none.'),
  dialect: Schema.union(DIALECTS as Dialect[])
    .default('generic')
    .description('Server family. Default "generic".'),
  models: Schema.dict(modelSchema)
    .required()
    .description('Model id → { contextWindow, defaultMaxTokens?, efforts?, defaultEffort? }. Required.'),
  timeoutMs: millisecondsSchema(1)
    .default(600_000)
    .description('Wait for headers, then for stream progress (empty chunks do not count), ms. Default 600000.'),
  deadlineMs: millisecondsSchema(1).description(
    'Total wall-clock limit of one call, retries included, ms. Default: none.',
  ),
  maxRetries: integerSchema().default(2).description('Retries after 429, 5xx or a connection failure. Default 2.'),
  retryBaseMs: millisecondsSchema().default(500).description('First backoff, ms, doubled per retry. Default 500.'),
  maxRetryWaitMs: millisecondsSchema()
    .default(60_000)
    .description('Cap of one wait between attempts, retry-after included, ms. Default 60000.'),
  headers: Schema.dict(Schema.string()).default({}).description('Extra static HTTP headers. Default none.'),
  promptCacheKey: Schema.union(['session', 'off']).description(
    'Per-session prompt_cache_key: session or off. Default session for dialect openai, off otherwise.',
  ),
})

const parseShape = strictConfig<OpenAICompatibleConfig>(OWNER, schema as unknown as Schema<OpenAICompatibleConfig>)

/**
 * Parses and validates the config. Every error names the key (never a key's value: the API key
 * is not printed even when it is the offending value).
 * @throws TypeError naming the offending key.
 */
export const parseOpenAICompatibleConfig: OpenAICompatibleConfigParser = Object.assign(
  (input: unknown): OpenAICompatibleConfig => {
    // Checked before schemastery, whose type errors quote the received value.
    if (input !== null && typeof input === 'object' && 'apiKey' in input) {
      const apiKey = (input as { apiKey?: unknown }).apiKey
      if (apiKey !== undefined && typeof apiKey !== 'string') fail('apiKey must be a string')
      if (apiKey === '') fail('apiKey must not be empty; omit it for a server without keys')
    }
    const parsed = parseShape(input)
    // Trimmed here: HTTP clients strip it from the header anyway, and redaction must look for what the server saw.
    const config =
      parsed.apiKey === undefined
        ? parsed
        : { ...parsed, apiKey: normalizeApiKey(parsed.apiKey, `${OWNER} config: apiKey`) }
    if (config.provider === '') fail('provider must not be empty')
    checkBaseURL(config.baseURL)
    if (config.apiKey !== undefined && config.apiKeyEnv !== undefined) fail('set apiKey or apiKeyEnv, not both')
    if (config.apiKeyEnv !== undefined && !ENV_NAME.test(config.apiKeyEnv))
      fail(`apiKeyEnv must be an environment variable name, got ${JSON.stringify(config.apiKeyEnv)}`)
    const modelIds = Object.keys(config.models)
    if (modelIds.length === 0) fail('models must name at least one model')
    const models = Object.fromEntries(modelIds.map((id) => [id, checkModel(id, config.models[id]!)]))
    for (const name of Object.keys(config.headers)) {
      if (!HEADER_NAME.test(name)) fail(`headers: ${JSON.stringify(name)} is not a valid HTTP header name`)
    }
    return deepFreeze({
      ...config,
      models,
      promptCacheKey: config.promptCacheKey ?? defaultPromptCacheKey(config.dialect),
    })
  },
  { schema: schema as unknown as Schema },
)

/**
 * The API key the config names: `apiKey`, the value of the `apiKeyEnv` variable (trimmed of
 * surrounding whitespace, as a CRLF env file or a mounted secret leaves it), or `undefined` for a
 * server without keys.
 * @throws Error naming the variable (never a value) when `apiKeyEnv` is unset, empty or blank,
 *   or holds whitespace inside the key.
 */
export function resolveApiKey(
  config: Pick<OpenAICompatibleConfig, 'provider' | 'apiKey' | 'apiKeyEnv'>,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  if (config.apiKey !== undefined) return normalizeApiKey(config.apiKey, `${OWNER} config: apiKey`)
  if (config.apiKeyEnv === undefined) return undefined
  const value = env[config.apiKeyEnv]
  if (value === undefined || value === '') {
    throw new Error(
      `${OWNER} (provider "${config.provider}"): apiKeyEnv names the environment variable ${config.apiKeyEnv}, ` +
        `which is not set or empty`,
    )
  }
  return normalizeApiKey(
    value,
    `${OWNER} (provider "${config.provider}"): the environment variable ${config.apiKeyEnv} (apiKeyEnv)`,
  )
}

function checkModel(id: string, model: ModelConfig): ModelConfig {
  const where = `models.${id}`
  for (const key of Object.keys(model)) {
    if (!MODEL_KEYS.includes(key)) fail(`${where}: ${unknownKeyMessage(key, MODEL_KEYS)}`)
  }
  const efforts = model.efforts ?? []
  if (efforts.some((effort) => effort === '')) fail(`${where}.efforts must not contain an empty string`)
  if (new Set(efforts).size !== efforts.length) fail(`${where}.efforts must not repeat an effort`)
  if (model.defaultEffort !== undefined && !efforts.includes(model.defaultEffort)) {
    fail(
      `${where}.defaultEffort ${JSON.stringify(model.defaultEffort)} must be one of efforts ` +
        `(${efforts.length ? efforts.join(', ') : 'none configured'})`,
    )
  }
  if (model.defaultMaxTokens !== undefined && model.defaultMaxTokens > model.contextWindow) {
    fail(`${where}.defaultMaxTokens (${model.defaultMaxTokens}) must not exceed contextWindow (${model.contextWindow})`)
  }
  return {
    contextWindow: model.contextWindow,
    ...(model.defaultMaxTokens === undefined ? {} : { defaultMaxTokens: model.defaultMaxTokens }),
    ...(efforts.length ? { efforts: [...efforts] } : {}),
    ...(model.defaultEffort === undefined ? {} : { defaultEffort: model.defaultEffort }),
    ...(model.cacheTtlMs === undefined ? {} : { cacheTtlMs: model.cacheTtlMs }),
    ...(model.promptCacheRetention === undefined ? {} : { promptCacheRetention: model.promptCacheRetention }),
    ...(model.cacheBreakpoints ? { cacheBreakpoints: true } : {}),
  }
}

function checkBaseURL(baseURL: string): void {
  if (!URL.canParse(baseURL)) fail(`baseURL must be an absolute http(s) URL, got ${JSON.stringify(baseURL)}`)
  const url = new URL(baseURL)
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    fail(`baseURL must use http or https, got ${JSON.stringify(url.protocol)}`)
  if (url.username || url.password) fail('baseURL must not carry credentials; use apiKeyEnv')
}

function fail(message: string): never {
  throw new TypeError(`${OWNER} config: ${message}`)
}
