const DECIMAL = /^\d+(\.\d+)?$/

/**
 * Seconds a response asks the client to wait: `retry-after-ms` (milliseconds, OpenAI and
 * Anthropic send it), else `retry-after` as delay-seconds or an HTTP date (a date in the past
 * is 0). `undefined` when neither header is present or readable: a negative number or a word
 * like `soon` is not a wait.
 */
export function parseRetryAfter(
  headers: { get(name: string): string | null } | undefined | null,
  now: number = Date.now(),
): number | undefined {
  const milliseconds = headers?.get('retry-after-ms')?.trim()
  if (milliseconds && DECIMAL.test(milliseconds)) return Number(milliseconds) / 1000
  const value = headers?.get('retry-after')?.trim()
  if (!value) return undefined
  if (DECIMAL.test(value)) return Number(value)
  // An HTTP date names a weekday and a month; a bare number or sign is not one.
  if (!/[A-Za-z]/.test(value)) return undefined
  const date = Date.parse(value)
  if (Number.isNaN(date)) return undefined
  return Math.max(0, (date - now) / 1000)
}
