import { SessionError } from '@warmfold/session'
import { RunError } from '../shared/run-error.ts'
import type { StoreSpec } from '../shared/session-store-spec.ts'
import { backendFactory, describeStore, redactUrl } from '../shared/session-store-spec.ts'
import { UsageError } from '../shared/usage-error.ts'
import type { SessionLog } from './read-session-log.ts'

/**
 * Reads session `id` from an SQL store with the store's `read`: its committed events, without
 * taking the session from a host that holds it and without creating or migrating anything. The
 * rows are the lines a JSONL file of the session would have, so "line N" is the event at seq N − 1.
 * @throws UsageError when the store or the session does not exist (exit 2); RunError when the
 *   store cannot be read or a row is not a valid event (exit 1), naming the store without a password.
 */
export async function readStoreSession(spec: Exclude<StoreSpec, { kind: 'file' }>, id: string): Promise<SessionLog> {
  const backend = (await backendFactory(spec))()
  const where = describeStore(spec)
  try {
    const session = await backend.read(id)
    return {
      file: where,
      sessionId: id,
      events: session.events,
      locate: (seq) => `${where} session ${id} seq ${seq}`,
      notes: [
        `Read from the session store ${where}: log line N is the event with seq N − 1 (the same canonical JSON ` +
          'line a JSONL file of the session has).',
      ],
    }
  } catch (error) {
    if (!SessionError.isInstance(error)) throw error
    const message = redactUrl(error.message)
    if (error.code === 'NOT_FOUND') throw new UsageError(`--store ${where}: ${message}`)
    throw new RunError(`cannot report session ${id} from --store ${where}: ${message}`, { cause: error })
  } finally {
    // A database store keeps a connection pool; the SQLite store's read has closed its connection.
    await (backend as { close?(): Promise<void> }).close?.()
  }
}
