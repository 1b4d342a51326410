import { createHash } from 'node:crypto'

/**
 * V8 hashes a string of more characters than this by its length alone, so a `Map` keyed by long
 * texts of one length compares a new key with every stored one: quadratic in a log whose requests
 * differ only inside one long message (2,000 distinct 100 KB keys of one length took 26 s).
 */
const LONGEST_HASHED_STRING = 16_383

/**
 * Interns segment texts: a segment that recurs in later requests (the whole history, usually) is
 * kept once, and its id stands for it. Ids are 0, 1, 2, … in the order texts are first seen, and
 * never given to another text. Lookup hashes the text once per request it appears in (a long text
 * by its SHA-1 digest, see {@link LONGEST_HASHED_STRING}), so a log costs time linear in its
 * characters.
 *
 * Every {@link intern} counts one reference; a holder that forgets a layout (a long-running
 * observer) calls {@link release} once per interned segment, and a text no one holds is dropped.
 * A holder that never releases (the doctor, over one log) keeps every text.
 */
export class SegmentInterner {
  private readonly ids = new Map<string, number>()
  /** Long texts by the digest of their content. */
  private readonly longIds = new Map<string, number>()
  private readonly texts = new Map<number, { readonly text: string; readonly key: string; references: number }>()
  private nextId = 0

  /** The id of `text` and the one stored copy of it; counts one reference to it. */
  intern(text: string): { readonly id: number; readonly text: string } {
    const long = text.length > LONGEST_HASHED_STRING
    const ids = long ? this.longIds : this.ids
    const key = long ? createHash('sha1').update(text).digest('base64') : text
    let id = ids.get(key)
    let stored = id === undefined ? undefined : this.texts.get(id)
    // A digest names its text; the comparison only guards against a collision (it runs on duplicates alone, linear).
    if (stored && long && stored.text !== text)
      throw new Error(`SegmentInterner: two texts of ${text.length} characters share the SHA-1 digest ${key}`)
    if (id === undefined || !stored) {
      id = this.nextId++
      ids.set(key, id)
      this.texts.set(id, (stored = { text, key, references: 0 }))
    }
    stored.references++
    return { id, text: stored.text }
  }

  /**
   * Gives back one reference to the text of `id` (taken by {@link intern}); the text is forgotten
   * when none is left.
   * @throws RangeError when `id` holds no reference (released more often than interned).
   */
  release(id: number): void {
    const stored = this.texts.get(id)
    if (!stored) throw new RangeError(`SegmentInterner.release: id ${id} holds no reference`)
    if (--stored.references > 0) return
    this.texts.delete(id)
    ;(stored.text.length > LONGEST_HASHED_STRING ? this.longIds : this.ids).delete(stored.key)
  }

  /** How many distinct texts are held. */
  get size(): number {
    return this.texts.size
  }
}
