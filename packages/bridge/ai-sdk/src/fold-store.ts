import type { LanguageModelV3Message } from '@ai-sdk/provider'

/**
 * One recorded fold: the exact prompt prefix it replaced, and what replaces it. Applying a fold
 * turns `prompt[0..prefixLength)` (when its digest is `prefixDigest`) into
 * `prompt[0..keptLength) + checkpoint`: the leading system messages stay, the folded messages
 * become one checkpoint message.
 */
export interface FoldRecord {
  /** Digest of the replaced prefix (see `prefixDigests`), system messages included. */
  readonly prefixDigest: string
  /** Messages in the replaced prefix, system messages included. */
  readonly prefixLength: number
  /** Leading messages of the prefix kept in place (the system messages). */
  readonly keptLength: number
  /** The checkpoint user message that replaces `prompt[keptLength..prefixLength)`. */
  readonly checkpoint: LanguageModelV3Message
  /** When the fold was made (ms since the epoch): for the host's records, never in a prompt. */
  readonly createdAt: number
}

/**
 * Where fold records live. A fold must be re-applied to every later call whose prompt starts
 * with the prefix it replaced (a host that re-sends its full history), so records outlive the
 * call that made them; a durable store lets them outlive the process.
 */
export interface FoldStore {
  /** Every record, oldest first. */
  load(): Promise<readonly FoldRecord[]>
  /** Keeps `record` (called once per fold, before the folded request is sent). */
  append(record: FoldRecord): Promise<void>
}

/** A store in memory: folds last as long as the middleware object (the default). */
export function memoryFoldStore(): FoldStore {
  const records: FoldRecord[] = []
  return {
    load: async () => records.slice(),
    append: async (record) => {
      records.push(record)
    },
  }
}
