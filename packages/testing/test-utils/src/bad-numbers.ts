/** The kinds of numeric config keys warmfold bounds (see `MAX_TIMER_MS` in `@warmfold/llm`). */
export type NumberKind = 'milliseconds' | 'integer' | 'share'

/** A value a numeric config key must refuse, and how the error must show it. */
export interface BadNumber {
  readonly value: number
  readonly shown: string
}

/** 2^31 − 1, Node's timer limit and the largest whole number any config key takes. */
const MAX = 2_147_483_647

/**
 * Values a numeric config key of `kind` must refuse, each with the text its error must show: NaN
 * and ±Infinity for every kind, then a negative number, a fraction for whole numbers, 2^31 and
 * 2^32 (just past Node's timer limit and past `AbortSignal.timeout`'s) for milliseconds and
 * counts, and for a share a value above 1. A key with a narrower range adds its own.
 */
export function badNumbers(kind: NumberKind): BadNumber[] {
  const values = [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -1]
  if (kind === 'share') values.push(1.5, -0.25)
  else values.push(0.5, MAX + 1, 2 ** 32)
  return values.map((value) => ({ value, shown: String(value) }))
}

/**
 * Runs `parse` and returns its error message, failing when it does not throw or when the
 * message does not name `key` and `shown` (the value as the error must show it).
 */
export function refusal(parse: () => unknown, key: string, shown: string): string {
  let message: string | undefined
  try {
    parse()
  } catch (error) {
    message = (error as Error).message
  }
  if (message === undefined) throw new Error(`expected ${key} = ${shown} to be refused, but it was accepted`)
  if (!message.includes(key) || !message.includes(shown))
    throw new Error(`expected the refusal of ${key} = ${shown} to name both, got: ${message}`)
  return message
}

/**
 * A copy of `base` with `value` at the key path `path` (`models.m.cacheTtlMs`), the objects on the
 * way copied or created; `base` is left as it was.
 */
export function withValue(
  base: Readonly<Record<string, unknown>>,
  path: string,
  value: unknown,
): Record<string, unknown> {
  const [key, ...rest] = path.split('.') as [string, ...string[]]
  const inner = base[key]
  return {
    ...base,
    [key]:
      rest.length === 0
        ? value
        : withValue(
            typeof inner === 'object' && inner !== null ? (inner as Record<string, unknown>) : {},
            rest.join('.'),
            value,
          ),
  }
}
