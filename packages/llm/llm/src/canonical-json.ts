/**
 * Deterministic JSON serialization: object keys sorted by code unit, no whitespace, array
 * order kept, `undefined` object members dropped (as `JSON.stringify` does).
 *
 * Everything that becomes prompt bytes, and every envelope comparison, goes through this
 * function, so two structurally equal values always produce the same bytes regardless of the
 * order in which their keys were assigned.
 *
 * @throws TypeError for values JSON cannot represent losslessly: non-finite numbers, bigint,
 *   functions, symbols, cycles, and objects that are not plain (a `Date`, `Map` or class
 *   instance would silently become `{}` or a string). The message names the offending path.
 */
export function canonicalJson(value: unknown): string {
  return serialize(value, '$', new Set())
}

function serialize(value: unknown, path: string, ancestors: Set<object>): string {
  if (value === null) return 'null'
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value)
    case 'boolean':
      return value ? 'true' : 'false'
    case 'number':
      if (!Number.isFinite(value)) {
        throw new TypeError(`canonicalJson: ${path} is ${value}, which JSON cannot represent`)
      }
      return JSON.stringify(value)
    case 'object':
      break
    default:
      throw new TypeError(`canonicalJson: ${path} is a ${typeof value}, which JSON cannot represent`)
  }
  const object = value as object
  if (ancestors.has(object)) throw new TypeError(`canonicalJson: ${path} is a cycle`)
  ancestors.add(object)
  try {
    if (Array.isArray(object)) {
      // Array.from visits holes (as undefined), which map() would skip and leave as `[1,,3]`.
      const items = Array.from(object, (item, index) =>
        serialize(item === undefined ? null : item, `${path}[${index}]`, ancestors),
      )
      return `[${items.join(',')}]`
    }
    const prototype = Object.getPrototypeOf(object)
    if (prototype !== Object.prototype && prototype !== null) {
      throw new TypeError(
        `canonicalJson: ${path} is a ${prototype?.constructor?.name ?? 'non-plain object'}, which JSON cannot ` +
          `represent losslessly`,
      )
    }
    const record = object as Record<string, unknown>
    const members: string[] = []
    for (const key of Object.keys(record).toSorted()) {
      const member = record[key]
      if (member === undefined) continue
      members.push(`${JSON.stringify(key)}:${serialize(member, `${path}.${key}`, ancestors)}`)
    }
    return `{${members.join(',')}}`
  } finally {
    ancestors.delete(object)
  }
}
