import { UsageError } from './usage-error.ts'

/** An integer from `minimum` to `maximum`; `why` says what the upper bound protects. */
export function boundedInteger(flag: string, text: string, minimum: number, maximum: number, why: string): number {
  const number = Number(text)
  if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(number) || number < minimum) {
    const wanted = minimum === 1 ? 'a positive integer' : `an integer ≥ ${minimum}`
    throw new UsageError(`${flag} must be ${wanted}, got ${JSON.stringify(text)}`)
  }
  if (number > maximum) throw new UsageError(`${flag} ${text.trim()} is above the bound of ${maximum} ${why}`)
  return number
}

/** A number of seconds from `minimum` to `maximum`; `note` follows the range in the message. */
export function boundedSeconds(flag: string, text: string, minimum: number, maximum: number, note = ''): number {
  const seconds = Number(text)
  if (text.trim() === '' || !Number.isFinite(seconds) || seconds < minimum || seconds > maximum) {
    const range = `from ${minimum} to ${maximum}${note}`
    throw new UsageError(`${flag} must be a number of seconds ${range}, got ${JSON.stringify(text)}`)
  }
  return seconds
}

/** `text` when it is one of `allowed`. */
export function oneOf<T extends string>(flag: string, text: string, allowed: readonly T[]): T {
  if (!allowed.includes(text as T))
    throw new UsageError(`${flag} must be one of ${allowed.join(', ')}, got ${JSON.stringify(text)}`)
  return text as T
}

/** `on` or `off`, as a boolean. */
export function onOff(flag: string, text: string): boolean {
  return oneOf(flag, text, ['on', 'off'] as const) === 'on'
}
