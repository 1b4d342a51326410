import type Schema from 'schemastery'
import { nonFiniteNumber, showValue } from './config-number.ts'

/**
 * What a host may write for a config whose parsed form is `T`: every key optional (the parser
 * fills defaults and refuses what is missing), no other keys.
 */
export type ConfigInput<T> = { [K in keyof T]?: T[K] }

/**
 * A plugin's config parser: validates a config and returns `T` with defaults filled; it is what
 * cordis calls through a plugin's static `Config`. `schema` is the underlying schemastery schema
 * (for docs and UIs).
 *
 * Two call signatures: called directly it takes any value (JSON from a file, a test's bad
 * input) and checks it at run time; the last one, `(config?: I)` (`config` required when `I`
 * has required keys), is the one `ctx.plugin(X, config)` checks a host's `config` against at
 * compile time (see `Parsed`), so an unknown or mistyped key in code is a type error.
 */
export interface ConfigParser<T, I = ConfigInput<T>> {
  (config: unknown): T
  // A config with keys the host must write is a required argument.
  (...config: {} extends I ? [config?: I] : [config: I]): T
  readonly schema: Schema
}

/**
 * Wraps a schemastery object schema so that unknown keys are rejected (schemastery keeps them)
 * and every error names the owner and the offending key, with the nearest known key when one is
 * close, e.g. `AnthropicAdapter config: unknown key "baseUrl" (did you mean "baseURL"?); known
 * keys: …`. A NaN or ±Infinity where the schema expects a number is refused too, naming the key
 * (`BasicCompactionEngine config: thresholdRatio must be a finite number, got NaN`): schemastery
 * itself lets NaN through a number without a step, and Infinity through one without a bound.
 */
export function strictConfig<T>(owner: string, schema: Schema<any, T>): ConfigParser<T, any> {
  const known = Object.keys((schema as unknown as { dict?: Record<string, unknown> }).dict ?? {})
  const parse = (config?: unknown): T => {
    if (config !== undefined && config !== null) {
      if (typeof config !== 'object' || Array.isArray(config)) {
        throw new TypeError(
          `${owner} config must be an object, got ${Array.isArray(config) ? 'an array' : typeof config}`,
        )
      }
      for (const key of Object.keys(config)) {
        if (!known.includes(key)) throw new TypeError(`${owner} config: ${unknownKeyMessage(key, known)}`)
      }
    }
    // schemastery lets NaN through a number schema without a step, and Infinity through one without a bound.
    const nonFinite = nonFiniteNumber(schema as Schema, config)
    if (nonFinite)
      throw new TypeError(
        `${owner} config: ${nonFinite.path} must be a finite number, got ${showValue(nonFinite.value)}`,
      )
    try {
      return schema(config ?? {})
    } catch (error) {
      throw new TypeError(`${owner} config: ${(error as Error).message}`, { cause: error })
    }
  }
  return Object.assign(parse, { schema: schema as Schema })
}

/**
 * `unknown key "<key>" (did you mean "<nearest>"?); known keys: …`: the suggestion names the
 * known key that differs only in case, or by at most a quarter of its length in edits (an
 * adjacent swap counts as one).
 */
export function unknownKeyMessage(key: string, known: readonly string[]): string {
  const nearest = nearestKey(key, known)
  return (
    `unknown key "${key}"${nearest === undefined ? '' : ` (did you mean "${nearest}"?)`}; known keys: ` +
    `${known.length ? known.join(', ') : '(none)'}`
  )
}

function nearestKey(key: string, known: readonly string[]): string | undefined {
  const folded = known.find((candidate) => candidate.toLowerCase() === key.toLowerCase())
  if (folded !== undefined) return folded
  let best: { key: string; distance: number } | undefined
  for (const candidate of known) {
    const distance = editDistance(key.toLowerCase(), candidate.toLowerCase())
    if (distance <= Math.max(1, Math.floor(candidate.length / 4)) && (!best || distance < best.distance))
      best = { key: candidate, distance }
  }
  return best?.key
}

/** Optimal string alignment distance (insertions, deletions, substitutions, adjacent swaps), by code unit. */
function editDistance(a: string, b: string): number {
  const rows: number[][] = [Array.from({ length: b.length + 1 }, (_, index) => index)]
  for (let i = 1; i <= a.length; i++) {
    const row = [i]
    for (let j = 1; j <= b.length; j++) {
      const above = rows[i - 1] as number[]
      let distance = Math.min(
        (above[j] as number) + 1,
        (row[j - 1] as number) + 1,
        (above[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1),
      )
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        distance = Math.min(distance, ((rows[i - 2] as number[])[j - 2] as number) + 1)
      row[j] = distance
    }
    rows.push(row)
  }
  return (rows[a.length] as number[])[b.length] as number
}
