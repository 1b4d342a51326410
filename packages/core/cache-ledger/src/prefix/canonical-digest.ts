import * as crypto from 'node:crypto'

/** A 96-bit digest of a value's canonical JSON, and that JSON's length in characters the model reads. */
export interface CanonicalDigest {
  /** 16 base64url characters; equal for two values exactly when their canonical JSON is equal. */
  readonly hash: string
  /**
   * `canonicalJson(value).length` with every string character counted once: JSON escapes are not
   * counted (a newline in a text is one character, as the model reads it, not two).
   */
  readonly chars: number
}

/** `String.prototype.isWellFormed` (ES2024, Node 20): no lone surrogate in the string. */
function isWellFormed(text: string): boolean {
  return (text as unknown as { isWellFormed(): boolean }).isWellFormed()
}

/** SHA-256 in base64url: the one-shot `crypto.hash` where Node has it (20.12+), a Hash object before. */
const sha256: (data: string) => string =
  typeof crypto.hash === 'function'
    ? (data) => crypto.hash('sha256', data, 'base64url')
    : (data) => crypto.createHash('sha256').update(data).digest('base64url')

/** A 96-bit hash of `text`, as 16 base64url characters. */
export function hashText(text: string): string {
  return sha256(text).slice(0, 16)
}

/** Strings at least this long go to the hash on their own rather than into the token string. */
const DIRECT_STRING = 1024

/**
 * What a digest has read so far: the token stream not yet hashed, the hash (once a long string
 * came), the characters counted.
 */
interface DigestState {
  stream: string
  hash?: crypto.Hash
  chars: number
}

/**
 * Digests `value` as `canonicalJson` (from `@warmfold/llm`) would serialize it, without
 * rendering the JSON: prompt parts are tens of kilobytes, and escaping each one only to hash it
 * cost more than the rest of the ledger together. The hash reads an unambiguous token stream
 * (structure characters, length-prefixed raw strings; a string with a lone surrogate, which UTF-8
 * would turn into U+FFFD, JSON-escaped under its own tag), so equal canonical JSON gives an equal
 * hash and different canonical JSON a different one (up to SHA-256 truncated to 96 bits).
 *
 * Accepts what `canonicalJson` accepts for prompt data: plain objects, arrays, strings, finite
 * numbers, booleans and null (`undefined` members are skipped, `undefined` items become null).
 * @throws TypeError for anything else, naming its path.
 */
export function canonicalDigest(value: unknown): CanonicalDigest {
  const state: DigestState = { stream: '', chars: 0 }
  visit(state, value, '$')
  // Short parts (most tool definitions, short messages) are hashed in one call, long ones piece
  // by piece: concatenating a 40 kB text into the token string would copy it once more.
  const hash = state.hash ? state.hash.update(state.stream).digest('base64url').slice(0, 16) : hashText(state.stream)
  return { hash, chars: state.chars }
}

function feedString(state: DigestState, tag: string, text: string): void {
  state.chars += text.length + 2
  if (!isWellFormed(text)) state.stream += `u${JSON.stringify(text)}`
  else if (text.length < DIRECT_STRING) state.stream += `${tag}${text.length}:${text}`
  else {
    state.hash ??= crypto.createHash('sha256')
    state.hash.update(`${state.stream}${tag}${text.length}:`).update(text)
    state.stream = ''
  }
}

function visit(state: DigestState, item: unknown, path: string): void {
  if (item === null) {
    state.stream += 'n'
    state.chars += 4
    return
  }
  switch (typeof item) {
    case 'string':
      feedString(state, 's', item)
      return
    case 'boolean':
      state.stream += item ? 't' : 'f'
      state.chars += item ? 4 : 5
      return
    case 'number': {
      if (!Number.isFinite(item))
        throw new TypeError(`canonicalDigest: ${path} is ${item}, which JSON cannot represent`)
      const text = JSON.stringify(item)
      state.stream += `d${text};`
      state.chars += text.length
      return
    }
    case 'object':
      break
    default:
      throw new TypeError(`canonicalDigest: ${path} is a ${typeof item}, which JSON cannot represent`)
  }
  if (Array.isArray(item)) {
    state.stream += '['
    state.chars += 2 + Math.max(0, item.length - 1)
    for (let index = 0; index < item.length; index++)
      visit(state, item[index] === undefined ? null : item[index], `${path}[${index}]`)
    state.stream += ']'
    return
  }
  const prototype = Object.getPrototypeOf(item)
  if (prototype !== Object.prototype && prototype !== null)
    throw new TypeError(
      `canonicalDigest: ${path} is a ${prototype?.constructor?.name ?? 'non-plain object'}, ` +
        'which JSON cannot represent losslessly',
    )
  const record = item as Record<string, unknown>
  state.stream += '{'
  state.chars += 2
  let members = 0
  for (const key of Object.keys(record).toSorted()) {
    const member = record[key]
    if (member === undefined) continue
    if (members++ > 0) state.chars += 1
    feedString(state, 'k', key)
    state.chars += 1
    visit(state, member, `${path}.${key}`)
  }
  state.stream += '}'
}
