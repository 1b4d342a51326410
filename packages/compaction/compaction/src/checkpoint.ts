import type { Message, MessageSource } from '@warmfold/llm'

/** The `plugin` name on a checkpoint message's source. */
export const CHECKPOINT_PLUGIN = 'warmfold/compaction-checkpoint'

/** The source of a checkpoint message written by compaction `compactionId`. */
export function checkpointSource(compactionId: string): MessageSource {
  return Object.freeze({ kind: 'plugin', plugin: CHECKPOINT_PLUGIN, details: Object.freeze({ compactionId }) })
}

/** Whether `source` marks a compaction checkpoint. */
export function isCheckpointSource(source: MessageSource | undefined): boolean {
  return source?.kind === 'plugin' && source.plugin === CHECKPOINT_PLUGIN
}

/** Whether `message` is a compaction checkpoint. */
export function isCheckpointMessage(message: Message): boolean {
  return message.role === 'user' && isCheckpointSource(message.source)
}

/** The compaction id a checkpoint message was written by, or `undefined` for other messages. */
export function checkpointCompactionId(message: Message): string | undefined {
  if (!isCheckpointMessage(message)) return undefined
  const details = (message.source as { details?: { compactionId?: unknown } }).details
  return typeof details?.compactionId === 'string' ? details.compactionId : undefined
}
