import Schema from 'schemastery'

/**
 * The longest delay Node's timers honour: 2^31 − 1 ms, about 24.8 days. A longer one fires after
 * 1 ms (with a `TimeoutOverflowWarning`), and `AbortSignal.timeout` throws above 2^32 − 1, so
 * every config key in milliseconds is bounded by it.
 */
export const MAX_TIMER_MS = 2_147_483_647

/**
 * The largest whole number any other numeric config key takes (token counts, sizes in
 * characters, retries, connections): also 2^31 − 1, far above any real value, so every sum and
 * product of them stays an exact integer.
 */
export const MAX_CONFIG_INTEGER = 2_147_483_647

/** The range of one numeric config key. */
export interface NumberRange {
  readonly min: number
  readonly max: number
  /** Whole numbers only. */
  readonly integer?: boolean
  /** `min` itself is outside the range. */
  readonly minExclusive?: boolean
  /** `max` itself is outside the range. */
  readonly maxExclusive?: boolean
  /** Why the bound is there, for the message (e.g. `Node's timer limit`). */
  readonly note?: string
}

/** Whole milliseconds from `min` to {@link MAX_TIMER_MS}. */
export function millisecondsRange(min = 0): NumberRange {
  return { min, max: MAX_TIMER_MS, integer: true, note: "milliseconds; the most is Node's timer limit" }
}

/** A whole number from `min` to `max` (default {@link MAX_CONFIG_INTEGER}). */
export function integerRange(min = 0, max = MAX_CONFIG_INTEGER): NumberRange {
  return { min, max, integer: true }
}

/**
 * A config key's schema in milliseconds: whole, from `min` to {@link MAX_TIMER_MS}. NaN and
 * ±Infinity are refused by `strictConfig` (schemastery's own number check lets NaN through).
 */
export function millisecondsSchema(min = 0): Schema<number> {
  return Schema.natural().min(min).max(MAX_TIMER_MS)
}

/** A config key's schema for a whole number from `min` to `max` (default {@link MAX_CONFIG_INTEGER}). */
export function integerSchema(min = 0, max = MAX_CONFIG_INTEGER): Schema<number> {
  return Schema.natural().min(min).max(max)
}

/**
 * A config key's schema for a share in [0, 1]; an owner that excludes an end checks it itself
 * (with {@link numberProblem}). NaN and ±Infinity are refused by `strictConfig`.
 */
export function shareSchema(): Schema<number> {
  return Schema.number().min(0).max(1)
}

/** `value` as an error message shows it: `NaN`, `Infinity` and `-0` as such (JSON would print `null` or `0`). */
export function showValue(value: unknown): string {
  if (typeof value === 'number') return Object.is(value, -0) ? '-0' : String(value)
  if (value === undefined) return 'undefined'
  if (typeof value === 'function') return 'a function'
  if (typeof value === 'bigint') return `${value}n`
  try {
    return JSON.stringify(value) ?? String(value)
  } catch {
    return Object.prototype.toString.call(value)
  }
}

/** How `range` reads in a message: `an integer from 1 to 2147483647`, `a number in (0, 1]`. */
export function describeRange(range: NumberRange): string {
  const { min, max, integer, minExclusive, maxExclusive, note } = range
  const kind = integer ? 'an integer' : 'a number'
  const span =
    minExclusive || maxExclusive
      ? `in ${minExclusive ? '(' : '['}${min}, ${max}${maxExclusive ? ')' : ']'}`
      : `from ${min} to ${max}`
  return `${kind} ${span}${note ? ` (${note})` : ''}`
}

/**
 * What is wrong with `value` for the config key `key` (a path such as `background.maxWaitMs`), or
 * undefined when it is a finite number in `range`: `<key> must be <range>, got <value>`.
 */
export function numberProblem(key: string, value: unknown, range: NumberRange): string | undefined {
  const inRange =
    typeof value === 'number' &&
    Number.isFinite(value) &&
    (!range.integer || Number.isInteger(value)) &&
    (range.minExclusive ? value > range.min : value >= range.min) &&
    (range.maxExclusive ? value < range.max : value <= range.max)
  return inRange ? undefined : `${key} must be ${describeRange(range)}, got ${showValue(value)}`
}

interface SchemaView {
  readonly type: string
  readonly dict?: Readonly<Record<string, SchemaView>>
  readonly inner?: SchemaView
  readonly list?: readonly SchemaView[]
}

/**
 * The first number in `value` that is NaN or ±Infinity where `schema` expects a number, as
 * `{ path, value }` (`background.maxWaitMs`, `models.gpt-5.cacheTtlMs`: paths as schemastery
 * writes them); schemastery accepts NaN wherever no step is set, and Infinity wherever no bound
 * is. Keys the schema does not type as numbers (`Schema.any()`, a live object) are not looked into.
 */
export function nonFiniteNumber(schema: Schema, value: unknown): { path: string; value: number } | undefined {
  return find(schema as unknown as SchemaView, value, '')
}

function find(schema: SchemaView, value: unknown, path: string): { path: string; value: number } | undefined {
  if (value === undefined || value === null) return undefined
  switch (schema.type) {
    case 'number':
      return typeof value === 'number' && !Number.isFinite(value) ? { path, value } : undefined
    case 'object':
      if (typeof value !== 'object' || Array.isArray(value)) return undefined
      for (const [key, inner] of Object.entries(schema.dict ?? {})) {
        const found = find(inner, (value as Record<string, unknown>)[key], join(path, key))
        if (found) return found
      }
      return undefined
    case 'dict':
    case 'array': {
      const array = schema.type === 'array'
      if (typeof value !== 'object' || Array.isArray(value) !== array || !schema.inner) return undefined
      for (const [key, item] of Object.entries(value)) {
        const found = find(schema.inner, item, array ? `${path}[${key}]` : join(path, key))
        if (found) return found
      }
      return undefined
    }
    case 'union':
    case 'intersect':
      for (const member of schema.list ?? []) {
        const found = find(member, value, path)
        if (found) return found
      }
      return undefined
    case 'transform':
      return schema.inner ? find(schema.inner, value, path) : undefined
    default:
      return undefined
  }
}

/** Joined as schemastery writes a path in its own errors, so both kinds of message name a key alike. */
function join(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`
}
