/**
 * Recursively freezes a plain data value (objects and arrays) and returns it.
 *
 * Everything that can become prompt bytes is frozen at creation, so no later code path can
 * mutate a logged message and make the next request silently differ from the previous one.
 */
export function deepFreeze<T>(value: T): T {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return value
  for (const key of Object.keys(value)) {
    deepFreeze((value as Record<string, unknown>)[key])
  }
  return Object.freeze(value)
}
