import type Schema from 'schemastery'

/**
 * A plugin's config parser: validates and fills defaults, and is what cordis calls through a
 * plugin's static `Config`. `schema` is the underlying schemastery schema (for docs and UIs).
 */
export type ConfigParser<T> = ((config?: unknown) => T) & { readonly schema: Schema }

/**
 * Wraps a schemastery object schema so that unknown keys are rejected (schemastery keeps them)
 * and every error names the owner and the offending key, e.g.
 * `LlmRuntime config: unknown key "retries"; known keys: (none)`.
 */
export function strictConfig<T>(owner: string, schema: Schema<any, T>): ConfigParser<T> {
  const known = Object.keys((schema as unknown as { dict?: Record<string, unknown> }).dict ?? {})
  const parse = (config?: unknown): T => {
    if (config !== undefined && config !== null) {
      if (typeof config !== 'object' || Array.isArray(config)) {
        throw new TypeError(`${owner} config must be an object, got ${Array.isArray(config) ? 'an array' : typeof config}`)
      }
      for (const key of Object.keys(config)) {
        if (!known.includes(key)) {
          throw new TypeError(`${owner} config: unknown key "${key}"; known keys: ${known.length ? known.join(', ') : '(none)'}`)
        }
      }
    }
    try {
      return schema(config ?? {})
    } catch (error) {
      throw new TypeError(`${owner} config: ${(error as Error).message}`, { cause: error })
    }
  }
  return Object.assign(parse, { schema: schema as Schema })
}
