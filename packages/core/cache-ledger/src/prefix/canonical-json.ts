/**
 * Serializes a parsed wire body deterministically: object keys sorted, properties whose value is
 * `null` or `undefined` left out (the request APIs read both as "absent", and SDKs differ in
 * which they send). Two bodies that an API reads the same way give the same text, whatever key
 * order or null padding the client used. For JSON without null members it writes what
 * `canonicalJson` of `@warmfold/llm` writes.
 */
export function canonicalWireJson(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value)
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null'
  if (Array.isArray(value)) {
    let text = '['
    for (let index = 0; index < value.length; index++)
      text += `${index ? ',' : ''}${value[index] === undefined ? 'null' : canonicalWireJson(value[index])}`
    return `${text}]`
  }
  const record = value as Record<string, unknown>
  const keys = Object.keys(record)
  let text = '{'
  let first = true
  for (const key of keys.length > 1 ? keys.toSorted() : keys) {
    const item = record[key]
    if (item === null || item === undefined) continue
    text += `${first ? '' : ','}${JSON.stringify(key)}:${canonicalWireJson(item)}`
    first = false
  }
  return `${text}}`
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
