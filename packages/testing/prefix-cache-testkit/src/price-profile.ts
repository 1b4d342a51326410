import { describeProfileValue as describe } from './profile-value.ts'

/**
 * What a provider charges, per token, relative to one uncached input token. Costs computed with
 * a profile are in "input-token" units: 1 is the price of one uncached prompt token.
 */
export interface PriceProfile {
  /** The built-in name, or where the profile was read from (a JSON file's path). */
  readonly name: string
  /** Price of a prompt token read from the cache (Anthropic and OpenAI: 0.1). */
  readonly cacheRead: number
  /** Price of a prompt token written to the cache (1 where writes are billed as plain input). */
  readonly cacheWrite: number
  /** Price of an output token. */
  readonly output: number
  /** Dollars per million uncached input tokens, or null when only relative costs are known. */
  readonly usdPerMillionInput: number | null
}

/** The built-in profile names. */
export type PriceProfileName = 'deepseek' | 'openai' | 'anthropic-5m' | 'anthropic-1h'

/**
 * Published list prices, as multipliers of the uncached input price (sources and dates in the
 * README's "Prices" section):
 * - `deepseek`: `deepseek-flash` (V4.1), peak hours: hit $0.006, miss $0.30, output $1.20 per
 *   million; no write fee (off-peak halves every rate, so the ratios hold).
 * - `openai`: GPT-5.6 Terra: input $2.50, output $15 per million; cache reads 0.1×, cache writes
 *   1.25× (GPT-5.6 and later bill writes).
 * - `anthropic-5m` / `anthropic-1h`: Claude Sonnet 5: input $2, output $10 per million; reads
 *   0.1×, writes 1.25× for 5-minute entries and 2× for 1-hour entries.
 */
export const PRICE_PROFILES: Readonly<Record<PriceProfileName, PriceProfile>> = Object.freeze({
  deepseek: Object.freeze({ name: 'deepseek', cacheRead: 0.02, cacheWrite: 1, output: 4, usdPerMillionInput: 0.3 }),
  openai: Object.freeze({ name: 'openai', cacheRead: 0.1, cacheWrite: 1.25, output: 6, usdPerMillionInput: 2.5 }),
  'anthropic-5m': Object.freeze({
    name: 'anthropic-5m',
    cacheRead: 0.1,
    cacheWrite: 1.25,
    output: 5,
    usdPerMillionInput: 2,
  }),
  'anthropic-1h': Object.freeze({
    name: 'anthropic-1h',
    cacheRead: 0.1,
    cacheWrite: 2,
    output: 5,
    usdPerMillionInput: 2,
  }),
})

/** For help texts. */
export const PRICE_SYNTAX = `${Object.keys(PRICE_PROFILES).join(' | ')} | a JSON file`

const KEYS = ['cacheRead', 'cacheWrite', 'output', 'usdPerMillionInput'] as const

/**
 * Checks a price profile read from JSON: an object with the numbers `cacheRead`, `cacheWrite`
 * and `output` (finite, ≥ 0) and optionally `usdPerMillionInput` (finite and ≥ 0, or null), and
 * no other key. `source` names where it came from in every error and becomes the profile's name.
 * @throws TypeError naming `source`, the key and the bad value.
 */
export function priceProfileFromJson(value: unknown, source: string): PriceProfile {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TypeError(
      `price profile ${source} must be a JSON object with the keys ${KEYS.join(', ')}, got ${describe(value)}`,
    )
  }
  const record = value as Record<string, unknown>
  const unknown = Object.keys(record).filter((key) => !(KEYS as readonly string[]).includes(key))
  if (unknown.length)
    throw new TypeError(
      `price profile ${source} has unknown key(s) ${unknown.map((key) => JSON.stringify(key)).join(', ')}; the ` +
        `keys are ${KEYS.join(', ')}`,
    )
  const multiplier = (key: 'cacheRead' | 'cacheWrite' | 'output'): number => {
    const number = record[key]
    if (number === undefined)
      throw new TypeError(
        `price profile ${source} is missing ${JSON.stringify(key)} (a number ≥ 0: the price of one token relative ` +
          `to an uncached input token)`,
      )
    if (typeof number !== 'number' || !Number.isFinite(number) || number < 0)
      throw new TypeError(
        `price profile ${source}: ${JSON.stringify(key)} must be a finite number ≥ 0, got ${describe(number)}`,
      )
    return number
  }
  const usd = record.usdPerMillionInput ?? null
  if (usd !== null && (typeof usd !== 'number' || !Number.isFinite(usd) || usd < 0)) {
    throw new TypeError(
      `price profile ${source}: "usdPerMillionInput" must be a finite number ≥ 0 or null, got ${describe(usd)}`,
    )
  }
  return Object.freeze({
    name: source,
    cacheRead: multiplier('cacheRead'),
    cacheWrite: multiplier('cacheWrite'),
    output: multiplier('output'),
    usdPerMillionInput: usd,
  })
}

/** The built-in profile called `name`, or undefined. */
export function builtinPriceProfile(name: string): PriceProfile | undefined {
  return Object.hasOwn(PRICE_PROFILES, name) ? PRICE_PROFILES[name as PriceProfileName] : undefined
}
