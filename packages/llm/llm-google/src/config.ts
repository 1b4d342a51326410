import type { ConfigParser } from '@warmfold/llm'
import { integerSchema, MAX_CONFIG_INTEGER, millisecondsSchema } from '@warmfold/llm'
import type { AdapterModelConfig, ApiKeySource, AttemptLimits } from '@warmfold/llm/adapter'
import { adapterConfigParser, attemptLimitsSchema, resolveAdapterApiKey } from '@warmfold/llm/adapter'
import Schema from 'schemastery'
import type { ThinkingLevelName } from './default-thinking.ts'
import { defaultThinking, THINKING_LEVEL_NAMES } from './default-thinking.ts'

/** What the adapter knows about one Gemini model. */
export interface GoogleModelConfig extends AdapterModelConfig {
  /**
   * `maxOutputTokens` of a request that sets no `maxTokens`; omitted, none
   * is sent and the model's own limit applies.
   */
  readonly defaultMaxTokens?: number
  /**
   * Gemini 2.5 style: `thinkingBudget` per effort (`0` turns thinking off where the model allows it, `-1` is
   * dynamic). Exclusive with `thinkingLevels`. Omitted (and no `thinkingLevels`): the default for the model id's
   * family ({@link defaultThinking}).
   */
  readonly thinkingBudgets?: { readonly [effort: string]: number }
  /** Gemini 3 style: `thinkingLevel` per effort. Exclusive with `thinkingBudgets`. */
  readonly thinkingLevels?: { readonly [effort: string]: ThinkingLevelName }
  /** Efforts the model advertises; default every key of its thinking table. Each must be a key of the table. */
  readonly efforts?: readonly string[]
  /**
   * How long the provider keeps this model's cached prefix unused, in ms;
   * Google documents none for implicit caching.
   */
  readonly cacheTtlMs?: number
}

/** The parsed config of `GoogleAdapter`; `apiKeyEnv` is `'GEMINI_API_KEY'` when neither it nor `apiKey` is set. */
export interface GoogleAdapterConfig extends ApiKeySource, AttemptLimits {
  /** Provider id the adapter registers under; default `'google'`. */
  readonly provider: string
  /** API base URL (the SDK's `httpOptions.baseUrl`); omitted, `https://generativelanguage.googleapis.com`. */
  readonly baseURL?: string
  /** API version path segment; default the SDK's (`v1beta`). */
  readonly apiVersion?: string
  /** Known models by id. */
  readonly models: { readonly [model: string]: GoogleModelConfig }
  /** Ask for thought summaries (`includeThoughts`) whenever thinking is on, so they stream as reasoning blocks. */
  readonly includeThoughts: boolean
}

/** The environment variable read when the config names neither `apiKey` nor `apiKeyEnv`. */
export const DEFAULT_API_KEY_ENV = 'GEMINI_API_KEY'

const modelSchema = Schema.object({
  contextWindow: integerSchema(1).required().description('Maximum prompt + output tokens.'),
  defaultMaxTokens: integerSchema(1).description('maxOutputTokens when a request sets none.'),
  thinkingBudgets: Schema.dict(Schema.number().min(-1).max(MAX_CONFIG_INTEGER).step(1)).description(
    'Gemini 2.5: thinkingBudget per effort (0 off, -1 dynamic).',
  ),
  thinkingLevels: Schema.dict(Schema.union(THINKING_LEVEL_NAMES.map((level) => Schema.const(level)))).description(
    'Gemini 3: thinkingLevel per effort.',
  ),
  efforts: Schema.array(Schema.string()).description('Accepted efforts; default the keys of the thinking table.'),
  defaultEffort: Schema.string().description('Effort used when a request names none.'),
  cacheTtlMs: millisecondsSchema(1).description(
    "Cache lifetime of this model's prefix in ms; default none (undocumented).",
  ),
})

const schema = Schema.object({
  provider: Schema.string().default('google').description('Provider id the adapter registers under.'),
  baseURL: Schema.string().description('API base URL; default https://generativelanguage.googleapis.com.'),
  apiVersion: Schema.string().description("API version path segment; default the SDK's (v1beta)."),
  apiKey: Schema.string().role('secret').description('The API key (exclusive with apiKeyEnv).'),
  apiKeyEnv: Schema.string().description(
    `Environment variable holding the key; default ${DEFAULT_API_KEY_ENV} when neither is set.`,
  ),
  models: Schema.dict(modelSchema).default({}).description('Known models by id.'),
  includeThoughts: Schema.boolean().default(true).description('Ask for thought summaries when thinking is on.'),
  ...attemptLimitsSchema(300_000),
})

/**
 * Parses and validates the `GoogleAdapter` config: unknown keys (also inside a model entry),
 * `apiKey` together with `apiKeyEnv`, empty strings, a model with both thinking tables, and
 * efforts its table does not define fail with a `TypeError` naming the key. The key itself is
 * never part of a message.
 */
export const parseGoogleConfig: ConfigParser<GoogleAdapterConfig> = adapterConfigParser(
  'GoogleAdapter',
  schema,
  DEFAULT_API_KEY_ENV,
  (config: GoogleAdapterConfig, fail) => {
    if (config.apiVersion === '') fail('apiVersion must not be empty')
    return Object.fromEntries(Object.entries(config.models).map(([id, model]) => [id, checkModel(id, model, fail)]))
  },
)

function checkModel(id: string, input: GoogleModelConfig, fail: (message: string) => never): GoogleModelConfig {
  // schemastery fills absent dicts and arrays with empty ones; empty means "not set" here.
  const { thinkingBudgets, thinkingLevels, efforts, ...rest } = input
  const budgets = thinkingBudgets && Object.keys(thinkingBudgets).length ? thinkingBudgets : undefined
  const levels = thinkingLevels && Object.keys(thinkingLevels).length ? thinkingLevels : undefined
  if (budgets && levels)
    fail(
      `models["${id}"]: thinkingBudgets and thinkingLevels are exclusive (Gemini 2.5 takes a budget, Gemini 3 a level)`,
    )
  // The model's own table, else its family's default: efforts are checked against what will be sent.
  const table = (budgets ?? levels ?? defaultThinking(id)?.table) as { readonly [effort: string]: unknown } | undefined
  for (const effort of efforts ?? []) {
    if (!table || !Object.hasOwn(table, effort)) {
      fail(
        `models["${id}"].efforts: "${effort}" has no entry in ${levels ? 'thinkingLevels' : 'thinkingBudgets'} ` +
          `(known: ${table ? Object.keys(table).join(', ') : 'none'})`,
      )
    }
  }
  const model: GoogleModelConfig = {
    ...rest,
    ...(budgets ? { thinkingBudgets: budgets } : {}),
    ...(levels ? { thinkingLevels: levels } : {}),
    ...(efforts?.length ? { efforts } : {}),
  }
  if (model.defaultEffort !== undefined && table && !Object.hasOwn(table, model.defaultEffort)) {
    fail(
      `models["${id}"].defaultEffort "${model.defaultEffort}" has no entry in ` +
        `${levels ? 'thinkingLevels' : 'thinkingBudgets'}`,
    )
  }
  if (model.defaultEffort !== undefined && efforts?.length && !efforts.includes(model.defaultEffort)) {
    fail(`models["${id}"].defaultEffort "${model.defaultEffort}" must be one of models["${id}"].efforts`)
  }
  return model
}

/** The API key the config points at (see `resolveAdapterApiKey` of `@warmfold/llm/adapter`). */
export const resolveApiKey = (config: ApiKeySource, env = process.env): string =>
  resolveAdapterApiKey('GoogleAdapter', 'Gemini', config, DEFAULT_API_KEY_ENV, env)
