import type Schema from 'schemastery'
import { integerSchema, millisecondsSchema } from './config-number.ts'
import { deepFreeze } from './deep-freeze.ts'
import { normalizeApiKey } from './secret-redactor.ts'
import type { ConfigParser } from './strict-config.ts'
import { strictConfig, unknownKeyMessage } from './strict-config.ts'

/** Whether `value` is an absolute http(s) URL (an adapter's `baseURL`). */
export function isHttpUrl(value: string): boolean {
  return URL.canParse(value) && ['http:', 'https:'].includes(new URL(value).protocol)
}

/**
 * Refuses a key inside a model entry that `known` does not list, before schemastery (which keeps
 * unknown keys silently): `<owner> config: models["<id>"]: unknown key "<key>"; known keys: …`.
 * Anything that is not an object of objects is left to the schema.
 * @throws TypeError naming the owner, the model and the key.
 */
export function checkModelKeys(owner: string, models: unknown, known: readonly string[]): void {
  if (typeof models !== 'object' || models === null || Array.isArray(models)) return
  for (const [id, model] of Object.entries(models)) {
    if (typeof model !== 'object' || model === null || Array.isArray(model)) continue
    for (const key of Object.keys(model)) {
      if (!known.includes(key))
        throw new TypeError(`${owner} config: models["${id}"]: ${unknownKeyMessage(key, known)}`)
    }
  }
}

/** Where an adapter's API key comes from. */
export interface ApiKeySource {
  /** The key itself (config `apiKey`), trimmed. Exclusive with `apiKeyEnv`; prefer `apiKeyEnv`. */
  readonly apiKey?: string
  /** The environment variable holding it (config `apiKeyEnv`), read and trimmed at load. */
  readonly apiKeyEnv?: string
}

/**
 * The API key an adapter config points at: `apiKey`, else the variable `apiKeyEnv` names, else
 * `defaultEnv`; trimmed of surrounding whitespace (a CRLF env file or a mounted secret leaves a
 * trailing `\r\n`). `owner` (e.g. `AnthropicAdapter`) and `vendor` (e.g. `Anthropic`) word the errors.
 * @throws Error naming the variable (never a value) when it is unset or empty; TypeError when it
 *   holds only whitespace or whitespace inside the key.
 */
export function resolveAdapterApiKey(
  owner: string,
  vendor: string,
  config: ApiKeySource,
  defaultEnv: string,
  env: NodeJS.ProcessEnv = process.env,
): string {
  if (config.apiKey !== undefined) return normalizeApiKey(config.apiKey, `${owner} config: apiKey`)
  const name = config.apiKeyEnv ?? defaultEnv
  const value = env[name]
  if (value === undefined || value === '') {
    throw new Error(
      `${owner}: the environment variable ${name} (apiKeyEnv) is not set; export the ${vendor} API key in it, or ` +
        `name another variable with apiKeyEnv`,
    )
  }
  return normalizeApiKey(value, `${owner}: the environment variable ${name} (apiKeyEnv)`)
}

/**
 * The schemastery keys of `AttemptLimits`, in its order: `timeoutMs` (default `timeoutMs`; `note`
 * says what is not progress), `deadlineMs` (none), `maxRetries` (2) and `retryBaseMs` (500); the
 * milliseconds at most `MAX_TIMER_MS`, the retries at most `MAX_CONFIG_INTEGER`.
 */
export function attemptLimitsSchema(timeoutMs: number, note = '') {
  return {
    timeoutMs: millisecondsSchema(1)
      .default(timeoutMs)
      .description(`Wait for the response headers, then for stream progress${note}, per attempt.`),
    deadlineMs: millisecondsSchema(1).description(
      'Total wall-clock limit of one call, retries included; default none.',
    ),
    maxRetries: integerSchema().default(2).description('Retries after a retryable failure.'),
    retryBaseMs: millisecondsSchema().default(500).description('First backoff delay; doubles per retry.'),
  }
}

/** The part of a config every HTTP adapter's {@link adapterConfigParser} checks. */
type AdapterConfigBase = ApiKeySource & {
  readonly provider: string
  readonly baseURL?: string
  readonly models: Readonly<Record<string, { readonly efforts?: readonly string[] }>>
}

/**
 * The config parser of an HTTP adapter. It refuses an unknown key inside a model entry
 * ({@link checkModelKeys}, against the keys of the object schema `schema.models` is a dict of)
 * and anywhere else (`strictConfig` of `schema`); then the connection keys every HTTP adapter
 * shares, in this order: `apiKey` and `apiKeyEnv` are exclusive, neither may be empty, nor may
 * `provider`, and `baseURL` must be an absolute http(s) URL; then `refine`, which checks the rest
 * (failing with `fail(message)`) and may return the model table to keep. Every error is a
 * `TypeError` `<owner> config: …` naming the key, never a key value. The result is deep-frozen,
 * empty `efforts` lists dropped, `apiKey` trimmed (redaction must look for what the server saw),
 * else `apiKeyEnv` defaulting to `defaultEnv`.
 */
export function adapterConfigParser<C extends AdapterConfigBase>(
  owner: string,
  schema: Schema,
  defaultEnv: string,
  refine: (config: C, fail: (message: string) => never) => C['models'] | void,
): ConfigParser<C> {
  const parseShape = strictConfig<C>(owner, schema as unknown as Schema<any, C>)
  const modelKeys = Object.keys(schema.dict?.models?.inner?.dict ?? {})
  const fail = (message: string): never => {
    throw new TypeError(`${owner} config: ${message}`)
  }
  const parse = (input?: unknown): C => {
    if (typeof input === 'object' && input !== null && !Array.isArray(input))
      checkModelKeys(owner, (input as { models?: unknown }).models, modelKeys)
    const config = parseShape(input)
    if (config.apiKey !== undefined && config.apiKeyEnv !== undefined)
      fail('apiKey and apiKeyEnv are exclusive; set one of them')
    if (config.apiKey === '') fail('apiKey must not be empty')
    const apiKey = config.apiKey === undefined ? undefined : normalizeApiKey(config.apiKey, `${owner} config: apiKey`)
    if (config.apiKeyEnv === '') fail('apiKeyEnv must not be empty')
    if (config.provider === '') fail('provider must not be empty')
    if (config.baseURL !== undefined && !isHttpUrl(config.baseURL))
      fail(`baseURL must be an absolute http(s) URL, got ${JSON.stringify(config.baseURL)}`)
    // schemastery fills an absent `efforts` with `[]`; no efforts means no reasoning controls.
    const models = Object.entries(refine(config, fail) ?? config.models).map(([id, { efforts, ...model }]) => [
      id,
      efforts?.length ? { ...model, efforts } : model,
    ])
    const keySource = apiKey === undefined ? { apiKeyEnv: config.apiKeyEnv ?? defaultEnv } : { apiKey }
    return deepFreeze({ ...config, models: Object.fromEntries(models), ...keySource })
  }
  return Object.assign(parse, { schema }) as ConfigParser<C>
}
