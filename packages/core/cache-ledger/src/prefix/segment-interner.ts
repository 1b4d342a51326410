import { createHash } from 'node:crypto'

/**
 * V8 hashes a string of more characters than this by its length alone, so a `Map` keyed by long
 * texts of one length compares a new key with every stored one: quadratic in a log whose requests
 * differ only inside one long message (2,000 distinct 100 KB keys of one length took 26 s).
 */
const LONGEST_HASHED_STRING = 16_383

/**
 * Interns segment texts: a segment that recurs in later requests (the whole history, usually) is
 * kept once, and its id stands for it. Ids are 0, 1, 2, … in the order texts are first seen.
 * Lookup hashes the text once per request it appears in (a long text by its SHA-1 digest, see
 * {@link LONGEST_HASHED_STRING}), so a log costs time linear in its characters.
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
