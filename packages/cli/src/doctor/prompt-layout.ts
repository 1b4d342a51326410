import { createHash } from 'node:crypto'
import type { CanonicalRequest } from './canonical-request.ts'
import { canonicalJson } from './canonical-json.ts'

/**
 * A canonical prompt as interned segments, in order: one per tool, the system prompt, one per
 * message. Equal ids ⇔ equal text, so two prompts compare in O(segments); characters are only
 * compared inside the first segment that differs.
 */
export interface PromptLayout {
  readonly ids: readonly number[]
  readonly texts: readonly string[]
  /** Characters before each segment; `offsets[ids.length]` is the prompt's length. */
  readonly offsets: readonly number[]
  readonly toolCount: number
  readonly hasSystem: boolean
  /** Index of the first message segment (`toolCount + (hasSystem ? 1 : 0)`). */
  readonly headSegments: number
  /** Each message's role and index in the body's own list. */
  readonly messages: readonly { readonly role: string; readonly index: number }[]
}

/**
 * V8 hashes a string of more characters than this by its length alone, so a `Map` keyed by long
 * texts of one length compares a new key with every stored one: quadratic in a log whose requests
 * differ only inside one long message (2,000 distinct 100 KB keys of one length took 26 s).
 */
const LONGEST_HASHED_STRING = 16_383

/**
 * Interns segment texts: a segment that recurs in later requests (the whole history, usually) is
 * kept once, and its id stands for it. Lookup hashes the text once per request it appears in (a
 * long text by its SHA-1 digest, see {@link LONGEST_HASHED_STRING}), so a log costs time linear
 * in its characters.
 */
export class SegmentInterner {
  private readonly ids = new Map<string, number>()
  /** Long texts by the digest of their content. */
  private readonly longIds = new Map<string, number>()
  private readonly texts: string[] = []

  /** The id of `text` and the one stored copy of it. */
  intern(text: string): { readonly id: number; readonly text: string } {
    const long = text.length > LONGEST_HASHED_STRING
    const ids = long ? this.longIds : this.ids
    const key = long ? createHash('sha1').update(text).digest('base64') : text
    let id = ids.get(key)
    // A digest names its text; the comparison only guards against a collision (it runs on duplicates alone, linear).
    if (id !== undefined && long && this.texts[id] !== text)
      throw new Error(`SegmentInterner: two texts of ${text.length} characters share the SHA-1 digest ${key}`)
    if (id === undefined) {
      id = this.texts.length
      ids.set(key, id)
      this.texts.push(text)
    }
    return { id, text: this.texts[id] as string }
  }
}

/** Serializes `request` into segments: `{"tool":…}` per tool, `{"system":…}`, then each message (with its role). */
export function layoutOf(request: CanonicalRequest, interner: SegmentInterner): PromptLayout {
  const ids: number[] = []
  const texts: string[] = []
  const offsets = [0]
  const push = (text: string) => {
    const segment = interner.intern(text)
    ids.push(segment.id)
    texts.push(segment.text)
    offsets.push((offsets.at(-1) as number) + segment.text.length)
  }
  for (const tool of request.tools) push(canonicalJson({ tool }))
  if (request.system !== undefined) push(canonicalJson({ system: request.system }))
  const headSegments = ids.length
  for (const message of request.messages) push(canonicalJson(message.value))
  return {
    ids,
    texts,
    offsets,
    toolCount: request.tools.length,
    hasSystem: request.system !== undefined,
    headSegments,
    messages: request.messages.map(({ role, index }) => ({ role, index })),
  }
}

/** Which part segment `position` of `layout` belongs to. */
export function partAt(layout: PromptLayout, position: number): 'tools' | 'system' | 'messages' {
  return position < layout.toolCount ? 'tools' : position < layout.headSegments ? 'system' : 'messages'
}

/**
 * Characters two segments share from the start, when they are of the same part: a tool and a
 * system prompt both open with `{"` in canonical JSON, which says nothing about the prompt.
 */
export function sharedSegmentChars(left: string, leftPart: string, right: string, rightPart: string): number {
  return leftPart === rightPart ? commonPrefixLength(left, right) : 0
}

/** Length of the common prefix of two strings, in UTF-16 code units. */
export function commonPrefixLength(left: string, right: string): number {
  const limit = Math.min(left.length, right.length)
  let index = 0
  while (index < limit && left.charCodeAt(index) === right.charCodeAt(index)) index++
  return index
}
