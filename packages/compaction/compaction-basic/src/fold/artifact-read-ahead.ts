import type { Context } from '@cordisjs/core'
import type { Message } from '@warmfold/llm'
import type { AnySessionEvent, Session } from '@warmfold/session'
import { isCheckpointMessage } from '@warmfold/compaction'

/** The events whose message a later fold may summarize. */
const MESSAGE_EVENTS: ReadonlySet<string> = new Set(['user/message', 'assistant/message', 'tool/result'])

/**
 * Reads each message's artifacts soon after it is logged, not when a fold needs them: the
 * message is queued when the session logs it and read in the next macrotask, which in an agent
 * loop is while the request that carries it waits for the provider. A fold then only merges
 * what was read, so the audit and the trail add little to the fold itself. A message the queue
 * has not reached yet (or one restored from a store when a session reopens) is read by the
 * fold that needs it, as before. A checkpoint is not read: extraction leaves it out, and the
 * audit of the fold that replaces it compares what the audit that wrote it logged
 * (`heldInCheckpoint`). A reading that throws is reported as an `internal/warning`, not thrown
 * from the macrotask, which would end the host. `extractor` is the fold audit's
 * `ArtifactExtractor` (passed in: only the fold auditor and its config reach the fold audit package).
 */
export function installArtifactReadAhead(
  ctx: Context,
  extractor: { read(message: Message): unknown; forgetLines(): void },
): void {
  const pending: { readonly where: string; readonly message: Message }[] = []
  let scheduled: NodeJS.Immediate | undefined
  const drain = (): void => {
    scheduled = undefined
    for (const { where, message } of pending.splice(0)) {
      try {
        extractor.read(message)
      } catch (error) {
        // Thrown from a macrotask it would end the host; the fold that needs the message reads it again.
        const reason = (error as Error)?.message ?? String(error)
        ctx.emit('internal/warning', `fold audit: reading ${where} ahead failed: ${reason}`)
      }
    }
  }
  ctx.on('session/event', (session: Session, event: AnySessionEvent) => {
    if (!MESSAGE_EVENTS.has(event.type)) return
    const message = (event.data as { message: Message }).message
    if (isCheckpointMessage(message)) return
    pending.push({ where: `message ${event.seq} of session ${session.id}`, message })
    scheduled ??= setImmediate(drain)
  })
  // The scanned lines may hold on to a closed session's texts; the readings go with its messages.
  ctx.on('session/close', () => extractor.forgetLines())
  ctx.on('dispose', () => {
    if (scheduled) clearImmediate(scheduled)
    pending.length = 0
  })
}
