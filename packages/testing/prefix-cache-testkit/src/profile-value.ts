/**
 * A value of a profile's JSON as its error messages show it: `nothing`, `an array`, `Infinity`,
 * `NaN` or its JSON.
 */
export function describeProfileValue(value: unknown): string {
  if (value === undefined) return 'nothing'
  if (Array.isArray(value)) return 'an array'
  // JSON.stringify prints Infinity and NaN as null, which would hide the value.
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value)
  return JSON.stringify(value) ?? String(value)
}
