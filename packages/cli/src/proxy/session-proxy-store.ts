import { createHash, randomBytes } from 'node:crypto'
import { hostname } from 'node:os'
import type { RequestApi } from '@warmfold/cache-ledger/prefix'
import type { ProxyStore, StoredConversation } from '@warmfold/proxy'
import type { Session, SessionBackend } from '@warmfold/session'
import { SessionError } from '@warmfold/session'

declare module '@warmfold/session' {
  interface SessionEventMap {
    /** One exchange of `warmfold proxy --store`: its log line (the `warmfold` record, no body). */
    'proxy/exchange': Record<string, unknown>
    /** A proxy session's last conversation request, for the other replicas. */
    'proxy/conversation': StoredConversation & Record<string, unknown>
  }
}

/** The prefix of a replica's log session id; `proxy-last.` ones hold remembered conversation requests. */
export const PROXY_SESSION_PREFIX = 'proxy-'
const LAST_PREFIX = 'proxy-last.'

/** The id of a remembered request's session: what `recall` filters on before reading any. */
function lastId(conversation: StoredConversation, digest: string): string {
  const at = String(conversation.at).padStart(13, '0')
  return `${LAST_PREFIX}${conversation.api}.${at}.${conversation.replica}.${digest}`
}

/** The API, time and replica a remembered request's session id names; undefined for any other id. */
function parseLastId(id: string): { api: string; at: number; replica: string } | undefined {
  if (!id.startsWith(LAST_PREFIX)) return undefined
  const [api, at, replica] = id.slice(LAST_PREFIX.length).split('.')
  return api && at && replica ? { api, at: Number(at), replica } : undefined
}

/**
 * `warmfold proxy --store`'s store on a session store backend (SQLite or PostgreSQL): each replica
 * writes its exchanges as `proxy/exchange` events of its own session (`proxy-<time>-<host>-<pid>-<random>`,
 * which `warmfold report --store SPEC ID` reads), and each proxy session's last conversation
 * request as the one event of a session `proxy-last.<api>.<time>.<replica>.<key digest>`, replaced
 * (deleted, then made anew) by the next one and deleted when the replica closes. `recall` lists
 * the sessions and reads only the other replicas' ones of its API and time it has not read before.
 * Writes run one at a time, in order, off the forward's path.
 */
export class SessionProxyStore implements ProxyStore {
  private readonly held = new Map<string, Session>()
  /** The other replicas' remembered requests read so far, by session id (a new request gets a new id). */
  private readonly read = new Map<string, StoredConversation>()
  private work: Promise<void> = Promise.resolve()
  private failure: Error | undefined
  private closed = false

  private constructor(
    private readonly backend: SessionBackend,
    private readonly log: Session,
    private readonly maxHeld: number,
    private readonly onError: (error: Error) => void,
  ) {}

  /** This replica's name: the id of its log session. */
  get replica(): string {
    return this.log.id
  }

  /**
   * Creates this replica's log session in `backend`.
   * @throws SessionError when the store cannot be reached (`IO`) or refuses the session.
   */
  static async open(
    backend: SessionBackend,
    options: { maxHeld?: number; onError?: (error: Error) => void; now?: () => number } = {},
  ): Promise<SessionProxyStore> {
    const stamp = new Date((options.now ?? Date.now)()).toISOString().replace(/[-:]|\.\d+Z$/g, '')
    const host =
      hostname()
        .replace(/[^A-Za-z0-9]+/g, '')
        .slice(0, 24) || 'host'
    const id = `${PROXY_SESSION_PREFIX}${stamp}-${host}-${process.pid}-${randomBytes(3).toString('hex')}`
    const log = await backend.create(id, {})
    return new SessionProxyStore(backend, log, options.maxHeld ?? 1000, options.onError ?? (() => {}))
  }

  append(line: Readonly<Record<string, unknown>>): void {
    this.queue(async () => {
      this.log.append('proxy/exchange', line as Record<string, unknown>)
      await this.backend.flush(this.log)
    })
  }

  remember(given: StoredConversation): void {
    const conversation = { ...given, replica: this.replica }
    const digest = createHash('sha256').update(conversation.sessionKey).digest('hex').slice(0, 12)
    this.queue(async () => {
      const before = this.held.get(digest)
      this.held.delete(digest)
      if (before) await this.backend.delete?.(before)
      const session = await this.backend.create(lastId(conversation, digest), {})
      this.held.set(digest, session)
      session.append('proxy/conversation', conversation)
      await this.backend.flush(session)
      // The least recently replaced first, beyond the bound.
      for (const [oldId, old] of this.held) {
        if (this.held.size <= this.maxHeld) break
        this.held.delete(oldId)
        await this.backend.delete?.(old)
      }
    })
  }

  async recall(api: RequestApi, sinceMs: number): Promise<readonly StoredConversation[]> {
    const ids = (await this.backend.list()).filter((id) => {
      const named = parseLastId(id)
      return named !== undefined && named.api === api && named.at >= sinceMs && named.replica !== this.replica
    })
    const listed = new Set(ids)
    for (const id of this.read.keys()) if (!listed.has(id) && parseLastId(id)?.api === api) this.read.delete(id)
    const found = await Promise.all(
      ids.map(async (id) => {
        if (this.read.has(id)) return this.read.get(id)
        // Kept only once read whole: a session listed before its replica flushed the request is read again.
        const stored = await this.readLast(id)
        if (stored) this.read.set(id, stored)
        return stored
      }),
    )
    return found.filter((stored): stored is StoredConversation => stored?.api === api && stored.at >= sinceMs)
  }

  /** The request session `id` remembers; undefined when its replica replaced or deleted it since the list. */
  private async readLast(id: string): Promise<StoredConversation | undefined> {
    let session: Session
    try {
      session = await this.backend.read(id)
    } catch (error) {
      if (SessionError.isInstance(error) && error.code === 'NOT_FOUND') return undefined
      throw error
    }
    const event = session.events.findLast((candidate) => candidate.type === 'proxy/conversation')
    return event?.data as StoredConversation | undefined
  }

  /** Writes what is queued, deletes this replica's remembered requests, releases its log session. */
  async close(): Promise<void> {
    if (this.closed) return this.work
    this.closed = true
    this.queue(async () => {
      for (const session of this.held.values()) await this.backend.delete?.(session)
      this.held.clear()
    })
    await this.work
    await this.backend.release(this.log).catch((error: Error) => this.failed(error))
    await (this.backend as { close?(): Promise<void> }).close?.()
    if (this.failure) throw this.failure
  }

  /** Resolves once every write queued so far is done (for tests and the CLI's shutdown). */
  settled(): Promise<void> {
    return this.work
  }

  private queue(step: () => Promise<void>): void {
    if (this.failure) return
    this.work = this.work.then(() => (this.failure ? undefined : step().catch((error: Error) => this.failed(error))))
  }

  private failed(error: Error): void {
    if (this.failure) return
    this.failure = new Error(`the proxy store (session ${this.replica}) cannot be written: ${error.message}`, {
      cause: error,
    })
    this.onError(this.failure)
  }
}
