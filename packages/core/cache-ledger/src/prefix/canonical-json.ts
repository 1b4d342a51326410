/** Options of {@link canonicalJson}. */
export interface CanonicalJsonOptions {
  /**
   * Serializes a parsed wire body: object members whose value is `null` are left out (request
   * APIs read `null` and an absent property alike, and SDKs differ in which they send, so two
   * bodies an API reads the same way give the same text whatever null padding the client used),
   * and a number `JSON.parse` made infinite (`1e400`) is written as `null`, as `JSON.stringify`
   * writes it. Off by default (prompt data, where both throw).
   */
  readonly wire?: boolean
}

/**
 * Deterministic JSON serialization: object keys sorted by code unit, no whitespace, array order
 * kept, `undefined` object members dropped (as `JSON.stringify` does), `undefined` array items
 * written as `null`. The same bytes as `canonicalJson` of `@warmfold/llm`, without importing that
 * package (whose entry loads cordis): the prompt segments of the test kit's simulator and the
 * envelope hashes of the ledger are written with it; the doctor's wire bodies with `wire`.
 *
 * @throws TypeError for values JSON cannot represent losslessly: non-finite numbers, bigint,
 *   functions, symbols, cycles, and objects that are not plain. The message names the path.
 */
export function canonicalJson(value: unknown, options: CanonicalJsonOptions = {}): string {
  return serialize(value, '$', new Set(), options.wire === true)
}

function serialize(value: unknown, path: string, ancestors: Set<object>, omitNulls: boolean): string {
  if (value === null) return 'null'
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value)
    case 'boolean':
      return value ? 'true' : 'false'
    case 'number':
      if (Number.isFinite(value) || omitNulls) return JSON.stringify(value)
      throw new TypeError(`canonicalJson: ${path} is ${value}, which JSON cannot represent`)
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
        serialize(item === undefined ? null : item, `${path}[${index}]`, ancestors, omitNulls),
      )
      return `[${items.join(',')}]`
    }
    const prototype = Object.getPrototypeOf(object)
    if (prototype !== Object.prototype && prototype !== null) {
      const name = prototype?.constructor?.name ?? 'non-plain object'
      throw new TypeError(`canonicalJson: ${path} is a ${name}, which JSON cannot represent losslessly`)
    }
    const record = object as Record<string, unknown>
    const members: string[] = []
    for (const key of Object.keys(record).toSorted()) {
      const member = record[key]
      if (member === undefined || (omitNulls && member === null)) continue
      members.push(`${JSON.stringify(key)}:${serialize(member, `${path}.${key}`, ancestors, omitNulls)}`)
    }
    return `{${members.join(',')}}`
  } finally {
    ancestors.delete(object)
  }
}

/** A shallow copy of `record` without `keys`. */
export function withoutKeys(
  record: Readonly<Record<string, unknown>>,
  keys: readonly string[],
): Record<string, unknown> {
  const copy: Record<string, unknown> = {}
  for (const key in record) if (!keys.includes(key)) copy[key] = record[key]
  return copy
}
