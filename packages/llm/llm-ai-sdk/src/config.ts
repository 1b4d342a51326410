import type { LanguageModelV3, SharedV3ProviderOptions } from '@ai-sdk/provider'
import type { ConfigParser, NumberRange } from '@warmfold/llm'
import {
  deepFreeze,
  integerRange,
  integerSchema,
  millisecondsRange,
  millisecondsSchema,
  numberProblem,
  unknownKeyMessage,
} from '@warmfold/llm'
import type { AdapterModelConfig, AttemptLimits } from '@warmfold/llm/adapter'
import Schema from 'schemastery'

/** The provider specification version this adapter speaks (AI SDK 6, `@ai-sdk/provider` 3.x). */
export const SPECIFICATION_VERSION = 'v3'

/**
 * Which cache controls the adapter adds to a model's calls:
 * - `anthropic`: `providerOptions.anthropic.cacheControl` breakpoints (static head, last block);
 * - `openai`: `providerOptions.openai.promptCacheKey` per session (`@ai-sdk/openai`);
 * - `openai-compatible`: `prompt_cache_key` per session, passed as a raw body field through
 *   `providerOptions[<provider name>]` (`@ai-sdk/openai-compatible` copies unknown keys into the body);
 * - `none`: nothing.
 */
export type AiSdkCacheKind = 'anthropic' | 'openai' | 'openai-compatible' | 'none'

/** The cache kinds, in documentation order. */
export const CACHE_KINDS: readonly AiSdkCacheKind[] = ['anthropic', 'openai', 'openai-compatible', 'none']

/** What the adapter knows about one model. */
export interface AiSdkModelConfig extends AdapterModelConfig {
  /** The AI SDK model instance (`LanguageModelV3`, e.g. `anthropic('claude-…')`); a live object, not JSON. */
  readonly model: LanguageModelV3
  /** `maxOutputTokens` of a request that sets no `maxTokens`; absent, the provider's default. */
  readonly defaultMaxTokens?: number
  /** Efforts the model accepts (keys of `effortOptions`, or `'off'`). Absent: no reasoning controls. */
  readonly efforts?: readonly string[]
  /**
   * `providerOptions` merged into the call for each effort, e.g. `{ high: {
   * openai: { reasoningEffort: 'high' } } }`.
   */
  readonly effortOptions?: { readonly [effort: string]: SharedV3ProviderOptions }
  /** `providerOptions` sent with every call of this model (merged under the effort's). */
  readonly providerOptions?: SharedV3ProviderOptions
  /** Cache controls to add; default from `model.provider` (see {@link cacheKindOf}). */
  readonly cache?: AiSdkCacheKind
  /** Send a per-session prompt cache key (OpenAI kinds only); default `true`. */
  readonly promptCacheKey?: boolean
  /** How long the provider keeps an unused prefix, in ms; default 5 minutes for `anthropic`, else unknown. */
  readonly cacheTtlMs?: number
}

/** The parsed config of `AiSdkAdapter`. */
export interface AiSdkAdapterConfig extends AttemptLimits {
  /** Provider id the adapter registers under; default `'ai-sdk'`. */
  readonly provider: string
  /** Known models by warmfold model id. */
  readonly models: { readonly [model: string]: AiSdkModelConfig }
  /**
   * Strings scrubbed from every error message, cause and `usage.raw` the adapter hands out (the
   * provider's API key: the adapter does not hold it, the provider instance does).
   */
  readonly redact: readonly string[]
}

/** The effort that adds no effort options. */
export const EFFORT_OFF = 'off'

/** Anthropic's default cache lifetime (`{ type: 'ephemeral' }` without `ttl`). */
export const ANTHROPIC_CACHE_TTL_MS = 5 * 60_000

const TOP_KEYS = ['provider', 'models', 'redact', 'timeoutMs', 'deadlineMs', 'maxRetries', 'retryBaseMs'] as const
const MODEL_KEYS = (
  'model contextWindow defaultMaxTokens efforts defaultEffort effortOptions providerOptions cache promptCacheKey ' +
  'cacheTtlMs'
).split(' ')

/** The JSON-shaped part of the config, for hosts that render a form; `models` holds live objects and is left out. */
const schema = Schema.object({
  provider: Schema.string().default('ai-sdk').description('Provider id the adapter registers under.'),
  redact: Schema.array(Schema.string())
    .default([])
    .description('Secrets scrubbed from errors and usage.raw (the provider API key).'),
  timeoutMs: millisecondsSchema(1)
    .default(600_000)
    .description('Wait for the response, then for stream progress, per attempt.'),
  deadlineMs: millisecondsSchema(1).description('Total wall-clock limit of one call, retries included.'),
  maxRetries: integerSchema().default(2).description('Retries after a retryable failure, before any output.'),
  retryBaseMs: millisecondsSchema().default(500).description('First backoff delay; doubles per retry.'),
})

/**
 * Validates the `AiSdkAdapter` config by hand (it holds live model objects, so it is not JSON and
 * schemastery cannot check `models`) and fills the defaults. Every error is a `TypeError` naming
 * the key. A model whose `specificationVersion` is not `'v3'` is refused, naming the version.
 */
export const parseAiSdkConfig: ConfigParser<AiSdkAdapterConfig> = Object.assign(
  (input?: unknown): AiSdkAdapterConfig => {
    const raw = input ?? {}
    if (!isRecord(raw)) fail(`config must be an object, got ${describe(raw)}`)
    unknownKeys(raw, TOP_KEYS, 'config')
    const provider = raw.provider ?? 'ai-sdk'
    if (typeof provider !== 'string' || provider === '')
      fail(`provider must be a non-empty string, got ${describe(provider)}`)
    const redact = raw.redact ?? []
    if (!Array.isArray(redact) || redact.some((item) => typeof item !== 'string' || item === ''))
      fail('redact must be an array of non-empty strings')
    const timeoutMs = inRange(raw.timeoutMs ?? 600_000, 'timeoutMs', millisecondsRange(1))
    const deadlineMs =
      raw.deadlineMs === undefined ? undefined : inRange(raw.deadlineMs, 'deadlineMs', millisecondsRange(1))
    const maxRetries = inRange(raw.maxRetries ?? 2, 'maxRetries', integerRange())
    const retryBaseMs = inRange(raw.retryBaseMs ?? 500, 'retryBaseMs', millisecondsRange())
    const modelsInput = raw.models ?? {}
    if (!isRecord(modelsInput)) fail(`models must be an object of model configs by id, got ${describe(modelsInput)}`)
    const models: Record<string, AiSdkModelConfig> = {}
    for (const [id, entry] of Object.entries(modelsInput)) models[id] = parseModel(id, entry)
    // Only the plain parts are frozen: the model instances belong to the host and keep their state.
    return Object.freeze({
      provider,
      models: Object.freeze(models),
      redact: Object.freeze([...(redact as string[])].map((item) => item.trim())),
      timeoutMs,
      ...(deadlineMs === undefined ? {} : { deadlineMs }),
      maxRetries,
      retryBaseMs,
    })
  },
  { schema: schema as unknown as Schema },
)

function parseModel(id: string, entry: unknown): AiSdkModelConfig {
  const where = `models["${id}"]`
  if (!isRecord(entry)) fail(`${where} must be an object, got ${describe(entry)}`)
  unknownKeys(entry, MODEL_KEYS, where)
  const model = entry.model
  if (!isRecord(model) || typeof model.doStream !== 'function')
    fail(`${where}.model must be an AI SDK LanguageModel instance (an object with doStream), got ${describe(model)}`)
  checkSpecificationVersion(model, `${where}.model`)
  const contextWindow = inRange(entry.contextWindow, `${where}.contextWindow`, integerRange(1))
  const defaultMaxTokens =
    entry.defaultMaxTokens === undefined
      ? undefined
      : inRange(entry.defaultMaxTokens, `${where}.defaultMaxTokens`, integerRange(1))
  const cacheTtlMs =
    entry.cacheTtlMs === undefined ? undefined : inRange(entry.cacheTtlMs, `${where}.cacheTtlMs`, millisecondsRange(1))
  const effortOptions =
    entry.effortOptions === undefined ? undefined : optionsDict(entry.effortOptions, `${where}.effortOptions`)
  if (effortOptions && Object.hasOwn(effortOptions, EFFORT_OFF))
    fail(`${where}.effortOptions.${EFFORT_OFF} is reserved: effort '${EFFORT_OFF}' adds no options`)
  const providerOptions =
    entry.providerOptions === undefined
      ? undefined
      : providerOptionsOf(entry.providerOptions, `${where}.providerOptions`)
  let efforts: string[] | undefined
  if (entry.efforts !== undefined) {
    if (!Array.isArray(entry.efforts) || entry.efforts.some((effort) => typeof effort !== 'string' || effort === ''))
      fail(`${where}.efforts must be an array of non-empty strings`)
    const known = [EFFORT_OFF, ...Object.keys(effortOptions ?? {})]
    for (const effort of entry.efforts as string[]) {
      if (!known.includes(effort))
        fail(`${where}.efforts: "${effort}" has no entry in ${where}.effortOptions (known: ${known.join(', ')})`)
    }
    efforts = entry.efforts.length ? [...(entry.efforts as string[])] : undefined
  }
  const defaultEffort = entry.defaultEffort
  if (defaultEffort !== undefined && (typeof defaultEffort !== 'string' || !(efforts ?? []).includes(defaultEffort))) {
    fail(`${where}.defaultEffort ${describe(defaultEffort)} must be one of ${where}.efforts`)
  }
  const cache = entry.cache
  if (cache !== undefined && !(CACHE_KINDS as readonly unknown[]).includes(cache))
    fail(`${where}.cache must be one of ${CACHE_KINDS.join(', ')}, got ${describe(cache)}`)
  if (entry.promptCacheKey !== undefined && typeof entry.promptCacheKey !== 'boolean')
    fail(`${where}.promptCacheKey must be a boolean, got ${describe(entry.promptCacheKey)}`)
  return Object.freeze({
    model: model as unknown as LanguageModelV3,
    contextWindow,
    ...(defaultMaxTokens === undefined ? {} : { defaultMaxTokens }),
    ...(efforts === undefined ? {} : { efforts: Object.freeze(efforts) }),
    ...(defaultEffort === undefined ? {} : { defaultEffort: defaultEffort as string }),
    ...(effortOptions === undefined ? {} : { effortOptions }),
    ...(providerOptions === undefined ? {} : { providerOptions }),
    ...(cache === undefined ? {} : { cache: cache as AiSdkCacheKind }),
    ...(entry.promptCacheKey === undefined ? {} : { promptCacheKey: entry.promptCacheKey as boolean }),
    ...(cacheTtlMs === undefined ? {} : { cacheTtlMs }),
  })
}

/**
 * Refuses a model of another provider specification. AI SDK 7 models (`'v4'`, `@ai-sdk/provider`
 * 4.x) need Node 22 and are not tested here, so they are refused rather than assumed compatible.
 * @throws TypeError naming the version received.
 */
export function checkSpecificationVersion(model: { readonly specificationVersion?: unknown }, where: string): void {
  if (model.specificationVersion !== SPECIFICATION_VERSION) {
    fail(
      `${where} implements provider specification ${describe(model.specificationVersion)}; this adapter supports ` +
        `only "${SPECIFICATION_VERSION}" (AI SDK 6, @ai-sdk/provider 3.x)`,
    )
  }
}

/**
 * The cache kind of a model: the explicit `cache` setting, else from the model's `provider`
 * string: `anthropic.*` (`@ai-sdk/anthropic`, e.g. `anthropic.messages`) → `anthropic`,
 * `openai.*` (`@ai-sdk/openai`, e.g. `openai.chat`, `openai.responses`) → `openai`, anything else
 * `none` (an OpenAI-compatible provider is named by the host, so it must say `openai-compatible`).
 */
export function cacheKindOf(config: AiSdkModelConfig): AiSdkCacheKind {
  if (config.cache) return config.cache
  const provider = config.model.provider
  if (provider.startsWith('anthropic.')) return 'anthropic'
  if (provider.startsWith('openai.')) return 'openai'
  return 'none'
}

function optionsDict(value: unknown, where: string): { readonly [effort: string]: SharedV3ProviderOptions } {
  if (!isRecord(value)) fail(`${where} must be an object of providerOptions by effort, got ${describe(value)}`)
  return Object.freeze(
    Object.fromEntries(
      Object.entries(value).map(([effort, options]) => [effort, providerOptionsOf(options, `${where}.${effort}`)]),
    ),
  )
}

function providerOptionsOf(value: unknown, where: string): SharedV3ProviderOptions {
  if (!isRecord(value))
    fail(`${where} must be providerOptions (an object keyed by provider name), got ${describe(value)}`)
  for (const [name, options] of Object.entries(value)) {
    if (!isRecord(options)) fail(`${where}.${name} must be an object of options, got ${describe(options)}`)
  }
  // providerOptions are JSON by the spec; a copy frozen deep keeps the caller from changing them later.
  return deepFreeze(structuredClone(value)) as SharedV3ProviderOptions
}

function inRange(value: unknown, where: string, range: NumberRange): number {
  const problem = numberProblem(where, value, range)
  if (problem) fail(problem)
  return value as number
}

function unknownKeys(value: Record<string, unknown>, known: readonly string[], where: string): void {
  for (const key of Object.keys(value)) {
    if (!known.includes(key)) fail(`${where}: ${unknownKeyMessage(key, known)}`)
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function describe(value: unknown): string {
  if (value === undefined) return 'undefined'
  if (typeof value === 'function') return 'a function'
  if (typeof value === 'object' && value !== null) return Array.isArray(value) ? 'an array' : 'an object'
  return JSON.stringify(value)
}

function fail(message: string): never {
  throw new TypeError(`AiSdkAdapter config: ${message}`)
}
