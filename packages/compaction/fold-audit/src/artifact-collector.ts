import type { Artifact, ArtifactClass, ArtifactOrigin } from './artifact.ts'

const ORIGIN_RANK: Readonly<Record<ArtifactOrigin, number>> = { assistant: 0, tool: 1, user: 2 }

/** An {@link Artifact} while its mentions are still being counted. */
type Entry = { -readonly [Key in keyof Artifact]: Artifact[Key] }

/**
 * What tells artifacts apart: class and text. A message's reading keeps the keys of its mentions,
 * so merging a region makes none.
 */
export function artifactKey(artifactClass: ArtifactClass, text: string): string {
  return `${artifactClass}\u0000${text}`
}

/** Folds every mention of the same (class, text) into one {@link Artifact}, in order of first mention. */
export class ArtifactCollector {
  private readonly entries = new Map<string, Entry>()

  /**
   * Records `count` mentions (default one) of `text` of class `artifactClass` in message `seq`;
   * `key` is {@link artifactKey} of them, when the caller kept it.
   */
  add(
    artifactClass: ArtifactClass,
    text: string,
    seq: number,
    origin: ArtifactOrigin,
    count = 1,
    key = artifactKey(artifactClass, text),
  ): void {
    const entry = this.entries.get(key)
    if (entry === undefined) {
      this.entries.set(key, { class: artifactClass, text, seq, firstSeq: seq, origin, mentions: count })
      return
    }
    entry.mentions += count
    if (seq > entry.seq) entry.seq = seq
    if (ORIGIN_RANK[origin] > ORIGIN_RANK[entry.origin]) entry.origin = origin
  }

  /** The {@link artifactKey} of each artifact of {@link list}, in the same order. */
  keys(): string[] {
    return [...this.entries.keys()]
  }

  /** The artifacts collected so far, in order of first mention. */
  list(): Artifact[] {
    return [...this.entries.values()].map((entry) => ({ ...entry }))
  }
}
