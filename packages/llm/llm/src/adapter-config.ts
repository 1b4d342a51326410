import { normalizeApiKey } from './secret-redactor.ts'
import { unknownKeyMessage } from './strict-config.ts'

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
  /** The key itself (config `apiKey`). */
  readonly apiKey?: string
  /** The environment variable holding it (config `apiKeyEnv`). */
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
