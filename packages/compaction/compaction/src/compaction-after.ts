import type { ContentBlock, Message, MessageSource } from '@warmfold/llm'
import type { Session } from '@warmfold/session'
import type { CompactionTrigger } from './compaction-events.ts'

/** The `plugin` name on the source of a message a `compaction/after` listener appended. */
export const COMPACTION_AFTER_PLUGIN = 'warmfold/compaction-after'

/**
 * Context of the `compaction/after` hook: a summary was written and its checkpoint is about to be
 * committed. Listeners run in order and are awaited; what they {@link append} lands in the same
 * commit as the checkpoint, at the end of the folded surface, so the next request carries it.
 */
export interface CompactionAfterContext {
  readonly session: Session
  readonly compactionId: string
  readonly trigger: CompactionTrigger | 'manual'
  /** The summary text the model wrote (before framing). */
  readonly summary: string
  /**
   * Surface seqs the checkpoint will carry verbatim after itself (pinned messages with their
   * tool exchanges, kept user messages), in surface order, as planned when the hook runs.
   */
  readonly carriedSeqs: readonly number[]
  /** Aborted when the compaction is cancelled; nothing is committed then. */
  readonly signal?: AbortSignal
  /**
   * Queues one user message (e.g. the instruction files, re-read now) to append after the folded
   * surface in the checkpoint's commit. Text or blocks (`text`, `image`; no tool calls or
   * results). Callable only while the listener runs.
   * @throws TypeError for empty content or tool blocks, or when called after the hook ended.
   */
  append(content: string | readonly ContentBlock[]): void
  /**
   * Adds one line to the checkpoint's artifact trail (engines that write one; absent otherwise),
   * under "Noted by the host", verbatim: a fact code knows and no summary may lose (the ticket,
   * the branch, a file the host changed outside the tools). Its entries go last when the trail's
   * budget is short. Callable only while the listener runs.
   * @throws TypeError for text that is empty or spans several lines, or when called after the hook ended.
   */
  addTrailEntry?(text: string): void
}

declare module '@cordisjs/core' {
  interface Events {
    /**
     * After the summary call, before the checkpoint is committed. A throwing listener refuses the
     * compaction (nothing is committed; `compaction/end` records why).
     */
    'compaction/after'(context: CompactionAfterContext): void | Promise<void>
  }
}

/** The source of a message appended by a `compaction/after` listener of compaction `compactionId`. */
export function compactionAfterSource(compactionId: string): MessageSource {
  return Object.freeze({ kind: 'plugin', plugin: COMPACTION_AFTER_PLUGIN, details: Object.freeze({ compactionId }) })
}

/** Whether `message` was appended by a `compaction/after` listener. */
export function isCompactionAfterMessage(message: Message): boolean {
  return (
    message.role === 'user' && message.source?.kind === 'plugin' && message.source.plugin === COMPACTION_AFTER_PLUGIN
  )
}

/** The compaction id a `compaction/after` message was appended by, or `undefined` for other messages. */
export function compactionAfterId(message: Message): string | undefined {
  if (!isCompactionAfterMessage(message)) return undefined
  const id = (message.source as { details?: { compactionId?: unknown } }).details?.compactionId
  return typeof id === 'string' ? id : undefined
}
