import type { SessionBackend } from './session-backend.ts'
import { SessionError } from './session-error.ts'
import type { SessionOptions } from './session.ts'
import { Session } from './session.ts'

/**
 * Keeps sessions in memory for the life of the store. Reopening a released session replays
 * its events into a fresh `Session`, exactly as the file store does.
 */
export class MemoryBackend implements SessionBackend {
  private readonly sessions = new Map<string, Session>()

  async create(id: string, options: SessionOptions): Promise<Session> {
    if (this.sessions.has(id)) throw new SessionError('EXISTS', `session ${id} already exists in the memory store`)
    const session = new Session(id, options)
    this.sessions.set(id, session)
    return session
  }

  async open(id: string, options: SessionOptions): Promise<Session> {
    const stored = this.sessions.get(id)
    if (!stored) {
      throw new SessionError(
        'NOT_FOUND',
        `session ${id} does not exist in the memory store; known sessions: ` +
          `${[...this.sessions.keys()].join(', ') || '(none)'}`,
      )
    }
    if (!stored.isClosed) return stored
    const session = new Session(id, options)
    for (const event of stored.events) session.restore(event)
    this.sessions.set(id, session)
    return session
  }

  async read(id: string): Promise<Session> {
    const stored = this.sessions.get(id)
    if (!stored) throw new SessionError('NOT_FOUND', `session ${id} does not exist in the memory store`)
    const copy = new Session(id, {})
    for (const event of stored.events.slice(0, stored.settledLength)) copy.restore(event)
    copy.close()
    return copy
  }

  async list(): Promise<string[]> {
    return [...this.sessions.keys()].toSorted()
  }

  async flush(): Promise<void> {}

  async release(session: Session): Promise<void> {
    this.releaseSync(session)
  }

  releaseSync(session: Session): void {
    session.close()
  }

  async delete(session: Session): Promise<void> {
    if (this.sessions.get(session.id) !== session)
      throw new SessionError('CLOSED', `session ${session.id} is not held by the memory store`)
    session.close()
    this.sessions.delete(session.id)
  }
}
