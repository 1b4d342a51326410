import type { LanguageModelV3Message } from '@ai-sdk/provider'

/**
 * One recorded fold: the exact history it replaced, and what replaces it. The history is the
 * prompt after its leading system messages (which stay in place, so a host may change its system
 * prompt without losing its folds); applying a fold turns its first `prefixLength` messages, when
 * their digest is `prefixDigest`, into one checkpoint message.
 */
export interface FoldRecord {
  /** Digest of the replaced messages (see `prefixDigests`), leading system messages excluded. */
  readonly prefixDigest: string
  /** Messages replaced, counted after the leading system messages. */
  readonly prefixLength: number
  /** The checkpoint user message that replaces them. */
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
