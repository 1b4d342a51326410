import type { LanguageModelV3Message } from '@ai-sdk/provider'
import type { Session } from '@warmfold/session'
import type { FoldRecord, FoldStore } from './fold-store.ts'

declare module '@warmfold/session' {
  interface SessionEventMap {
    /** A fold `@warmfold/ai-sdk` made: the prompt prefix it replaced and the checkpoint that replaces it. */
    'ai-sdk/fold': { prefixDigest: string; prefixLength: number; checkpoint: LanguageModelV3Message; createdAt: number }
  }
}

/** The event type fold records are logged under. */
export const FOLD_EVENT = 'ai-sdk/fold'

/**
 * Fold records in a warmfold session log (`@warmfold/session`: memory, JSONL file, SQLite or
 * PostgreSQL backends), so folds outlive the process: a host that restarts and re-sends its full
 * history gets the same checkpoint, without a new summary call. Each fold is one `ai-sdk/fold`
 * event; `flush` (for example `() => ctx.sessions.flush(session)`) runs after each append, so a
 * fold is durable before the folded request is sent.
 * @throws TypeError naming the seq when a logged record is not a fold record.
 */
export function sessionFoldStore(session: Session, flush?: () => Promise<void>): FoldStore {
  return {
    load: async () =>
      session.events
        .filter((event) => event.type === FOLD_EVENT)
        .map((event) => {
          const data = event.data as Partial<FoldRecord> | null
          if (
            !data ||
            typeof data.prefixDigest !== 'string' ||
            !Number.isInteger(data.prefixLength) ||
            typeof data.checkpoint !== 'object' ||
            data.checkpoint === null
          ) {
            throw new TypeError(
              `sessionFoldStore: event ${event.seq} of session ${session.id} (${FOLD_EVENT}) ` +
                `is not a fold record: ${JSON.stringify(event.data)}`,
            )
          }
          return data as FoldRecord
        }),
    append: async (record) => {
      session.append(FOLD_EVENT, {
        prefixDigest: record.prefixDigest,
        prefixLength: record.prefixLength,
        checkpoint: record.checkpoint,
        createdAt: record.createdAt,
      })
      await flush?.()
    },
  }
}
