import { randomUUID } from 'node:crypto'
import { resolve } from 'node:path'
import type { Context } from '@cordisjs/core'
import { Service } from '@cordisjs/core'
import type { ConfigParser, Parsed, WarmfoldPluginInfo } from '@warmfold/llm'
import { strictConfig, WARMFOLD_PLUGIN } from '@warmfold/llm'
import Schema from 'schemastery'
import { JsonlFileBackend } from './jsonl-file-backend.ts'
import { MemoryBackend } from './memory-backend.ts'
import type { OpenOptions, SessionBackend, TornTailRepair } from './session-backend.ts'
import { SESSION_BACKEND_METHODS } from './session-backend.ts'
import { SessionError } from './session-error.ts'
import type { AnySessionEvent } from './session-event.ts'
import type { Session } from './session.ts'

declare module '@cordisjs/core' {
  interface Context {
    sessions: SessionStore
  }
  interface Events {
    /**
     * Fired when the store starts holding a session (after `create`, or after `open` replayed
     * it), before anything else can append. Invariant checkers add their validators here.
     */
    'session/open'(session: Session): void
    /**
     * `close(session)` was called, or the store is unloading, before the release: the session
     * accepts no more appends once the listeners return. Timers that use it should stop.
     */
    'session/close'(session: Session): void
    /** Fired after every append to a session this store holds. */
    'session/event'(session: Session, event: AnySessionEvent): void
    /** Fired when `open` repaired a torn last line (`repairTornTail: true`). */
    'session/repair'(repair: TornTailRepair): void
  }
}

/**
 * The ids `SessionStore` accepts: 1-128 letters, digits, '.', '_' or '-', starting with a letter or digit (so an id
 * is always a safe file name).
 */
export const SESSION_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/

/**
 * The `ctx.sessions` service: creates, opens, lists and persists sessions, in memory (default)
 * or as JSONL files. Unloading the store flushes every held session and releases its locks.
 */
export class SessionStore extends Service<SessionStore.Config> {
  static readonly [WARMFOLD_PLUGIN]: WarmfoldPluginInfo = { packageName: '@warmfold/session', provides: 'ctx.sessions' }
  static [Service.provide] = 'sessions'
  static [Service.immediate]: boolean = true

  private readonly backend: SessionBackend
  private readonly held = new Map<string, Session>()
  /** Ids whose `create` is under way: a second `create` of one is `EXISTS`, not the backend's lock error. */
  private readonly creating = new Set<string>()
  private readonly owner: Context

  constructor(ctx: Context, config: Parsed<SessionStore.Config>) {
    super(ctx, config)
    this.owner = ctx
    this.backend =
      typeof config.store === 'object'
        ? config.store
        : config.store === 'file'
          ? new JsonlFileBackend(resolve(config.directory))
          : new MemoryBackend()
  }

  /**
   * Creates an empty session. `id` defaults to a random UUID.
   * @throws SessionError `INVALID_ID` or `EXISTS` (also while another `create` of `id` in this
   *   store is under way).
   */
  async create(id: string = randomUUID()): Promise<Session> {
    checkId(id)
    if (this.held.has(id)) throw new SessionError('EXISTS', `session ${id} is already open in this store`)
    if (this.creating.has(id)) throw new SessionError('EXISTS', `session ${id} is being created in this store`)
    this.creating.add(id)
    try {
      return this.hold(await this.backend.create(id, {}))
    } finally {
      this.creating.delete(id)
    }
  }

  /**
   * Opens a stored session, replaying and validating every event. A session this store already
   * holds is returned as is.
   * @throws SessionError `NOT_FOUND`, `CORRUPT` (names file and line), `TORN_TAIL`, `LOCKED`.
   */
  async open(id: string, options: OpenOptions = {}): Promise<Session> {
    checkId(id)
    const held = this.held.get(id)
    if (held) return held
    const session = await this.backend.open(id, options, (repair) => this.owner.emit('session/repair', repair))
    return this.hold(session)
  }

  /**
   * Reads a stored session as it is now, without holding it: a host or process that holds it
   * is not disturbed, nothing is locked, repaired or created, and only what was flushed is read.
   * The session returned is closed (it takes no appends); use `open` to continue it.
   * @throws SessionError `INVALID_ID`, `NOT_FOUND`, `CORRUPT`, `IO`.
   */
  read(id: string): Promise<Session> {
    checkId(id)
    return this.backend.read(id)
  }

  /** Ids of every stored session, sorted. */
  list(): Promise<string[]> {
    return this.backend.list()
  }

  /**
   * Makes every event of `session` logged so far durable (written and fsync'd for the file
   * store). Events of a unit still being built (see `Session.unit`) wait for the unit to close.
   */
  flush(session: Session): Promise<void> {
    this.assertHeld(session)
    return this.backend.flush(session)
  }

  /** Flushes `session`, releases its lock and refuses further appends to it. */
  async close(session: Session): Promise<void> {
    this.assertHeld(session)
    this.held.delete(session.id)
    // Before the release: a listener (an engine's idle timer) must stop using it whatever the release does.
    this.owner.emit('session/close', session)
    await this.backend.release(session)
  }

  /**
   * Deletes `session` with every event in it and stops holding it (`session/close` fires first, as
   * for `close`): for a session whose making failed halfway, such as a fork whose replayed history
   * was refused, so nothing half-made is left. Not for a log anyone may still need.
   * @throws SessionError `UNSUPPORTED` when the backend cannot delete (it has no `delete`; the
   *   session is closed instead, with what it holds), `IO` when the storage refused.
   */
  async delete(session: Session): Promise<void> {
    this.assertHeld(session)
    this.held.delete(session.id)
    this.owner.emit('session/close', session)
    if (this.backend.delete) return this.backend.delete(session)
    await this.backend.release(session)
    throw new SessionError(
      'UNSUPPORTED',
      `session ${session.id} could not be deleted: its store's backend has no delete(), so it was closed with its ` +
        `${session.length} event(s) instead`,
    )
  }

  /**
   * Closes every held session, flushing and releasing each; resolves when all are released.
   * A host whose backend releases asynchronously (a database) awaits this before unloading.
   * @throws AggregateError naming how many sessions could not be released.
   */
  async closeAll(): Promise<void> {
    const results = await Promise.allSettled([...this.held.values()].map((session) => this.close(session)))
    const failures = results.flatMap((result) => (result.status === 'rejected' ? [result.reason as unknown] : []))
    if (failures.length)
      throw new AggregateError(failures, `SessionStore: ${failures.length} session(s) could not be released`)
  }

  /**
   * Flushes and releases every held session before returning: cordis does not await a
   * service's `stop()`, so unloading must not leave writes or locks behind. A backend without
   * `releaseSync` (a database) is released in the background instead; await `closeAll()` first.
   * Each session is announced on `session/close` first, as by {@link close}: a listener (an
   * engine's background fold) closes what it has open in the log, and it is flushed with the rest.
   */
  protected override stop(): void {
    const failures: unknown[] = []
    for (const session of this.held.values()) {
      try {
        this.owner.emit('session/close', session)
        if (this.backend.releaseSync) this.backend.releaseSync(session)
        else
          void this.backend
            .release(session)
            .catch((error: unknown) =>
              this.owner.emit(
                'internal/warning',
                `SessionStore: releasing session ${session.id} on unload failed: ${(error as Error).message}`,
              ),
            )
      } catch (error) {
        failures.push(error)
      }
    }
    this.held.clear()
    if (failures.length)
      throw new AggregateError(failures, `SessionStore: ${failures.length} session(s) could not be flushed on unload`)
  }

  private hold(session: Session): Session {
    this.held.set(session.id, session)
    // Looked up once: every `ctx.emit` lookup goes through cordis's context proxies, and this one
    // runs after every append of every session.
    const emit = this.owner.emit
    session.subscribe((event) => emit('session/event', session, event))
    this.owner.emit('session/open', session)
    return session
  }

  private assertHeld(session: Session): void {
    if (this.held.get(session.id) !== session)
      throw new SessionError('CLOSED', `session ${session.id} is not open in this store`)
  }
}

function checkId(id: unknown): asserts id is string {
  if (typeof id !== 'string' || !SESSION_ID_PATTERN.test(id)) {
    throw new SessionError(
      'INVALID_ID',
      `session id ${JSON.stringify(id)} is not allowed: use 1-128 letters, digits, '.', '_' or '-', starting with ` +
        `a letter or digit`,
    )
  }
}

export namespace SessionStore {
  export interface Config {
    /**
     * Where sessions live: `memory` (default), `file` (JSONL), or a {@link SessionBackend}
     * instance from a storage package (e.g. an SQL store), which makes this config code, not JSON.
     */
    store: 'memory' | 'file' | SessionBackend
    /** Folder of the file store, resolved against the working directory. */
    directory: string
  }
  const parse = strictConfig(
    'SessionStore',
    Schema.object({
      store: Schema.union(['memory', 'file'] as const)
        .default('memory')
        .description('Where sessions live: memory, file, or (in code) a SessionBackend.'),
      directory: Schema.string().default('.warmfold/sessions').description('Folder of the file store.'),
    }),
  ) as ConfigParser<Config>
  /** Validates the config; a `store` object must have every {@link SESSION_BACKEND_METHODS} method. */
  export const Config: ConfigParser<Config> = Object.assign(
    (config?: unknown): Config => {
      const store = (config as { store?: unknown } | undefined)?.store
      if (typeof store !== 'object' || store === null) return parse(config)
      const missing = SESSION_BACKEND_METHODS.filter(
        (name) => typeof (store as Record<string, unknown>)[name] !== 'function',
      )
      if (missing.length) {
        throw new TypeError(
          `SessionStore config: store must be "memory", "file" or a SessionBackend; the object given has no ` +
            `${missing.join(', ')} method${missing.length > 1 ? 's' : ''}`,
        )
      }
      return { ...parse({ ...(config as object), store: 'memory' }), store: store as SessionBackend }
    },
    { schema: parse.schema },
  )
}
