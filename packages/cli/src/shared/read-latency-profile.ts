import type { LatencyProfile } from '@warmfold/prefix-cache-testkit'
import {
  builtinLatencyProfile,
  LATENCY_KEYS,
  LATENCY_LIMITS,
  LATENCY_SYNTAX,
  latencyProfileFromJson,
} from '@warmfold/prefix-cache-testkit'
import { readProfileFile, writtenNumber } from './read-profile-file.ts'
import { UsageError } from './usage-error.ts'

/**
 * The `--latency` value: a built-in latency profile name, else the path of a JSON file holding
 * one (the keys `ttftMs`, `prefillTokensPerSecond`, `cachedTokensPerSecond`,
 * `decodeTokensPerSecond`; see `latencyProfileFromJson`).
 * @throws UsageError naming the value, the file, and the key and value that are wrong.
 */
export function readLatencyProfile(value: string): LatencyProfile {
  const builtin = builtinLatencyProfile(value)
  if (builtin) return builtin
  const { json, text } = readProfileFile('--latency', value, LATENCY_SYNTAX)
  checkLatencyNumbers(json, text, value)
  try {
    return latencyProfileFromJson(json, value)
  } catch (error) {
    throw new UsageError(`--latency: ${(error as Error).message}`)
  }
}

/**
 * Refuses a number outside its {@link LATENCY_LIMITS} (zero and negative rates, `1e308`) or one
 * JSON.parse read as Infinity (`1e999`), quoting the number as the file wrote it; the test kit's
 * check would see only the parsed value.
 * @throws UsageError naming the file, the key and the value.
 */
function checkLatencyNumbers(json: unknown, text: string, file: string): void {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return
  for (const key of LATENCY_KEYS) {
    const number = (json as Record<string, unknown>)[key]
    if (typeof number !== 'number') continue
    const { min, max, unit } = LATENCY_LIMITS[key]
    const written = writtenNumber(text, key, number)
    const range = `it must be a number of ${unit} from ${min} to ${max}`
    const where = `--latency file ${JSON.stringify(file)}: "${key}" is ${written}`
    if (!Number.isFinite(number))
      throw new UsageError(`${where}, which is out of range (not a finite number); ${range}`)
    if (number < min) throw new UsageError(`${where}, below ${min}; ${range}`)
    if (number > max) throw new UsageError(`${where}, above ${max}; ${range}`)
  }
}
