import type { PriceProfile } from '@warmfold/prefix-cache-testkit'
import { builtinPriceProfile, PRICE_SYNTAX, priceProfileFromJson } from '@warmfold/prefix-cache-testkit'
import { readProfileFile, writtenNumber } from './read-profile-file.ts'
import { UsageError } from './usage-error.ts'

/**
 * The `--price` value: a built-in profile name, else the path of a JSON file holding one.
 * @throws UsageError naming the value, the file and what is wrong with it.
 */
export function readPriceProfile(value: string): PriceProfile {
  const builtin = builtinPriceProfile(value)
  if (builtin) return builtin
  const { json, text } = readProfileFile('--price', value, PRICE_SYNTAX)
  checkPriceNumbers(json, text, value)
  try {
    return priceProfileFromJson(json, value)
  } catch (error) {
    throw new UsageError(`--price: ${(error as Error).message}`)
  }
}

/**
 * The largest value each key of a price file may have. A multiplier is the price of a token
 * relative to an uncached input token (real ones are 0.02 to 8); a dollar rate is per million
 * uncached input tokens (real ones are cents to a few hundred dollars). Anything larger is a typo
 * or a unit mix-up, and values near the largest double (`1e308`) turn every cost into Infinity.
 */
export const PRICE_FILE_LIMITS: Readonly<Record<'cacheRead' | 'cacheWrite' | 'output' | 'usdPerMillionInput', number>> =
  Object.freeze({
    cacheRead: 1000,
    cacheWrite: 1000,
    output: 1000,
    usdPerMillionInput: 10_000,
  })

/**
 * Refuses a number JSON.parse read as Infinity (`1e999`: JSON has no infinity, so it is out of
 * range) or one above {@link PRICE_FILE_LIMITS}, quoting the number as the file wrote it.
 * @throws UsageError naming the file, the key and the value.
 */
function checkPriceNumbers(json: unknown, text: string, file: string): void {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return
  for (const [key, limit] of Object.entries(PRICE_FILE_LIMITS)) {
    const number = (json as Record<string, unknown>)[key]
    if (typeof number !== 'number') continue
    const written = writtenNumber(text, key, number)
    const what =
      key === 'usdPerMillionInput'
        ? 'dollars per million uncached input tokens'
        : 'a multiplier of the price of an uncached input token'
    const where = `--price file ${JSON.stringify(file)}: "${key}" is ${written}`
    const range = `it must be ${what} from 0 to ${limit}`
    if (!Number.isFinite(number))
      throw new UsageError(`${where}, which is out of range (not a finite number); ${range}`)
    if (number > limit) throw new UsageError(`${where}, above ${limit}; ${range}`)
  }
}
