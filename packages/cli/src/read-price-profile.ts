import { readFileSync } from 'node:fs'
import type { PriceProfile } from '@warmfold/prefix-cache-testkit'
import { builtinPriceProfile, PRICE_SYNTAX, priceProfileFromJson } from '@warmfold/prefix-cache-testkit'
import { UsageError } from './usage-error.ts'

/**
 * The `--price` value: a built-in profile name, else the path of a JSON file holding one.
 * @throws UsageError naming the value, the file and what is wrong with it.
 */
export function readPriceProfile(value: string): PriceProfile {
  const builtin = builtinPriceProfile(value)
  if (builtin) return builtin
  let text: string
  try {
    text = readFileSync(value, 'utf8')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    const why = code === 'ENOENT' ? 'is neither a built-in profile nor an existing file' : `could not be read (${code ?? (error as Error).message})`
    throw new UsageError(`--price ${JSON.stringify(value)} ${why}; use ${PRICE_SYNTAX}`)
  }
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    throw new UsageError(`--price file ${JSON.stringify(value)} is not valid JSON: ${(error as Error).message}`)
  }
  try {
    return priceProfileFromJson(json, value)
  } catch (error) {
    throw new UsageError(`--price: ${(error as Error).message}`)
  }
}
