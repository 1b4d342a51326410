import type { LatencyProfile, PriceProfile } from '@warmfold/prefix-cache-testkit'
import {
  builtinLatencyProfile,
  builtinPriceProfile,
  LATENCY_KEYS,
  LATENCY_LIMITS,
  LATENCY_SYNTAX,
  latencyProfileFromJson,
  PRICE_SYNTAX,
  priceProfileFromJson,
} from '@warmfold/prefix-cache-testkit'
import { readFlagFile } from './read-flag-file.ts'
import { UsageError } from './usage-error.ts'

/** How a profile flag (`--price`, `--latency`) reads its value: a built-in name, else a JSON file. */
interface ProfileFlag<Profile> {
  readonly flag: string
  /** The accepted values, for messages. */
  readonly syntax: string
  readonly builtin: (name: string) => Profile | undefined
  /** Checks a file's JSON and makes the profile; its error message is quoted after the flag. */
  readonly fromJson: (json: unknown, file: string) => Profile
  /**
   * The bounds of each number key, checked first so the message quotes the number as the file
   * wrote it (`1e999`, which JSON.parse reads as Infinity); without `min`, the lower bound is
   * `fromJson`'s to check, and the message says 0.
   */
  readonly bounds: Readonly<Record<string, { readonly min?: number; readonly max: number; readonly what: string }>>
}

/**
 * The largest value each key of a price file may have. A multiplier is the price of a token
 * relative to an uncached input token (real ones are 0.02 to 8); a dollar rate is per million
 * uncached input tokens (real ones are cents to a few hundred dollars). Anything larger is a typo
 * or a unit mix-up, and values near the largest double (`1e308`) turn every cost into Infinity.
 */
const MULTIPLIER = { max: 1000, what: 'a multiplier of the price of an uncached input token' }
const PRICE: ProfileFlag<PriceProfile> = {
  flag: '--price',
  syntax: PRICE_SYNTAX,
  builtin: builtinPriceProfile,
  fromJson: priceProfileFromJson,
  bounds: {
    cacheRead: MULTIPLIER,
    cacheWrite: MULTIPLIER,
    output: MULTIPLIER,
    usdPerMillionInput: { max: 10_000, what: 'dollars per million uncached input tokens' },
  },
}

/** Latency files keep the test kit's {@link LATENCY_LIMITS} (no zero or negative rate, no `1e308`). */
const LATENCY: ProfileFlag<LatencyProfile> = {
  flag: '--latency',
  syntax: LATENCY_SYNTAX,
  builtin: builtinLatencyProfile,
  fromJson: latencyProfileFromJson,
  bounds: Object.fromEntries(
    LATENCY_KEYS.map((key) => {
      const { min, max, unit } = LATENCY_LIMITS[key]
      return [key, { min, max, what: `a number of ${unit}` }]
    }),
  ),
}

/**
 * The `--price` value: a built-in profile name, else the path of a JSON file with the keys
 * `cacheRead`, `cacheWrite`, `output` and optionally `usdPerMillionInput`.
 * @throws UsageError naming the value, the file, and the key and value that are wrong.
 */
export const readPriceProfile = (value: string): PriceProfile => readProfile(PRICE, value)

/**
 * The `--latency` value: a built-in latency profile name, else the path of a JSON file holding
 * one (the keys `ttftMs`, `prefillTokensPerSecond`, `cachedTokensPerSecond`,
 * `decodeTokensPerSecond`; see `latencyProfileFromJson`).
 * @throws UsageError naming the value, the file, and the key and value that are wrong.
 */
export const readLatencyProfile = (value: string): LatencyProfile => readProfile(LATENCY, value)

function readProfile<Profile>(profile: ProfileFlag<Profile>, value: string): Profile {
  const builtin = profile.builtin(value)
  if (builtin) return builtin
  const { flag } = profile
  let text: string
  try {
    // A regular file of at most a mebibyte, without its BOM: a FIFO or /dev/zero is refused by name.
    text = readFlagFile(value, `${flag} ${JSON.stringify(value)}`, `use ${profile.syntax}`)
  } catch (error) {
    if (error instanceof UsageError) throw error
    const code = (error as NodeJS.ErrnoException).code
    const why =
      code === 'ENOENT'
        ? 'is neither a built-in profile nor an existing file'
        : `could not be read (${code ?? (error as Error).message})`
    throw new UsageError(`${flag} ${JSON.stringify(value)} ${why}; use ${profile.syntax}`)
  }
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    throw new UsageError(`${flag} file ${JSON.stringify(value)} is not valid JSON: ${(error as Error).message}`)
  }
  if (typeof json === 'object' && json !== null && !Array.isArray(json)) {
    for (const [key, { min, max, what }] of Object.entries(profile.bounds)) {
      const number = (json as Record<string, unknown>)[key]
      if (typeof number !== 'number') continue
      // As the file writes it: JSON.parse keeps only the value, and reads `1e999` as Infinity.
      const written = new RegExp(`"${key}"\\s*:\\s*(-?[0-9][0-9.eE+-]*)`).exec(text)?.[1] ?? String(number)
      const where = `${flag} file ${JSON.stringify(value)}: "${key}" is ${written}`
      const range = `it must be ${what} from ${min ?? 0} to ${max}`
      if (!Number.isFinite(number))
        throw new UsageError(`${where}, which is out of range (not a finite number); ${range}`)
      if (min !== undefined && number < min) throw new UsageError(`${where}, below ${min}; ${range}`)
      if (number > max) throw new UsageError(`${where}, above ${max}; ${range}`)
    }
  }
  try {
    return profile.fromJson(json, value)
  } catch (error) {
    throw new UsageError(`${flag}: ${(error as Error).message}`)
  }
}
