/**
 * The classes of literal facts a fold can lose. The order of {@link ARTIFACT_CLASSES} is the
 * order of importance the audit ranks dropped items by: what exists only in the transcript
 * first (the user's words, errors, commands), what can be looked up again last.
 */
export type ArtifactClass = 'user-message' | 'error' | 'command' | 'path' | 'identifier' | 'url' | 'number'

/** Every artifact class, most important first. */
export const ARTIFACT_CLASSES: readonly ArtifactClass[] = Object.freeze([
  'user-message',
  'error',
  'command',
  'path',
  'identifier',
  'url',
  'number',
])

/**
 * Who put an artifact into the conversation:
 * - `user`: text the user typed (a message whose source is `user`, code blocks they pasted included);
 * - `tool`: a tool call's arguments or a tool's result;
 * - `assistant`: the assistant's own text.
 */
export type ArtifactOrigin = 'user' | 'tool' | 'assistant'

/**
 * One literal fact of a conversation region, with every mention of it folded together. Plain
 * JSON, so it can be logged as is.
 */
export interface Artifact {
  readonly class: ArtifactClass
  /**
   * The normalized text the survival check looks for: ANSI colour codes removed, trimmed, white
   * space collapsed; per class also without positions, prefixes and trailing punctuation (see
   * `test/corpus/LABELLING.md`).
   */
  readonly text: string
  /** Seq of the message of the newest mention. */
  readonly seq: number
  /** Seq of the message of the first mention. */
  readonly firstSeq: number
  /** `user` when the user typed it at least once, else `tool` when a tool call or result held it, else `assistant`. */
  readonly origin: ArtifactOrigin
  /** How often the region mentions it (every occurrence, several in one message included). */
  readonly mentions: number
}

/** Whether `value` is one of the {@link ARTIFACT_CLASSES}. */
export function isArtifactClass(value: unknown): value is ArtifactClass {
  return typeof value === 'string' && (ARTIFACT_CLASSES as readonly string[]).includes(value)
}
