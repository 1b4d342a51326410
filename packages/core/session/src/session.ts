import type { Message } from '@warmfold/llm'
import { deepFreeze } from '@warmfold/llm'
import type { RequestHeader } from './request-header.ts'
import { SessionError } from './session-error.ts'
import type {
  AnySessionEvent,
  SessionEvent,
  SessionEventMap,
  SessionEventType,
  SurfaceIntent,
} from './session-event.ts'
import { isSurfaceEventType } from './session-event.ts'
import { fail as invalidAppend, validateAppend } from './validate-append.ts'

/** A read-only view of the surface: the seqs of the events whose messages form the request. */
export interface SessionSurface {
  /** Surface node seqs in request order. */
  readonly nodes: readonly number[]
  /** Incremented by every `replace`; appends do not change it. */
  readonly replaceGeneration: number
}

/** Surface intent accepted by {@link Session.append}: `'append'` is shorthand for `{ op: 'append' }`. */
export type SurfaceIntentInput = 'append' | SurfaceIntent

/** Called after an event is logged. */
export type SessionListener = (event: AnySessionEvent, session: Session) => void

/** An event about to be logged, as a validator sees it. */
export interface AppendCandidate {
  readonly seq: number
  readonly type: string
  readonly data: unknown
  readonly surface?: SurfaceIntent
}

/**
 * Runs before an event is logged, after the log's own rules passed. Throwing rejects the
 * append and leaves the log untouched (invariant checkers use this).
 */
export type AppendValidator = (candidate: AppendCandidate, session: Session) => void

/** Options of a new {@link Session}. */
export interface SessionOptions {
  /** Clock for event times (milliseconds since the epoch); default `Date.now`. */
  now?: () => number
}

/**
 * An append-only event log whose surface projects to the messages of the next request.
 *
 * Invariants: events are never changed or removed; `seq` equals the event's log position;
 * every surface node is a surface event; a replace only shadows nodes (their events stay in the
 * log); `deriveMessages()` is a pure per-node projection, so the same surface always yields the
 * same messages.
 */
export class Session {
  readonly id: string
  private readonly log: AnySessionEvent[] = []
  private readonly nodes: number[] = []
  private readonly nodeMessages: Message[] = []
  private generation = 0
  private headerSeq = -1
  private readonly listeners = new Set<SessionListener>()
  private readonly validators = new Set<AppendValidator>()
  private readonly now: () => number
  private closed = false
  /** Snapshots of the current surface, dropped by every surface change. */
  private view: { surface?: SessionSurface; messages?: readonly Message[] } = {}
  private eventsCache?: readonly AnySessionEvent[]
  /** The open unit: its first seq and how deeply `unit()` calls are nested. */
  private openUnit?: { start: number; depth: number }
  /** First seq → event count of every closed unit of two or more events appended (not restored). */
  private readonly unitSizes = new Map<number, number>()

  constructor(id: string, options: SessionOptions = {}) {
    this.id = id
    this.now = options.now ?? Date.now
  }

  /** Number of logged events; also the seq the next event gets. */
  get length(): number {
    return this.log.length
  }

  /** A frozen snapshot of the whole log. */
  get events(): readonly AnySessionEvent[] {
    if (this.eventsCache?.length !== this.log.length) this.eventsCache = Object.freeze(this.log.slice())
    return this.eventsCache
  }

  /** The current surface (a frozen snapshot). */
  get surface(): SessionSurface {
    this.view.surface ??= Object.freeze({ nodes: Object.freeze([...this.nodes]), replaceGeneration: this.generation })
    return this.view.surface
  }

  /**
   * Number of events before the open {@link unit}, or {@link length} when none is open. A store
   * persists only this far, so it never writes part of a unit.
   */
  get settledLength(): number {
    return this.openUnit?.start ?? this.log.length
  }

  /**
   * The number of events in the unit that starts at `seq`: 2 or more for the first event of a
   * closed multi-event unit appended to this instance, 1 otherwise (stores record it on disk).
   * @internal
   */
  unitSizeAt(seq: number): number {
    return this.unitSizes.get(seq) ?? 1
  }

  /**
   * Runs `build` synchronously and makes every event it appends one **unit**: a store writes
   * a unit in a single write and never a part of it, and a file store that finds a unit cut
   * short by a crash treats the whole unit as a torn tail (see the README, Durability). Use it
   * for events that are only valid together, such as a pricing event and the replace it prices.
   *
   * Nested calls join the outer unit. The events are appended, validated and announced one by
   * one as usual; a unit is not a transaction: when `build` throws after some appends, those
   * events stay in the log (listeners have seen them) and the unit closes with them.
   *
   * @returns what `build` returns.
   * @throws whatever `build` throws; `TypeError` when `build` returns a promise (appends after
   *   its first `await` would fall outside the unit).
   */
  unit<T>(build: () => T): T {
    if (this.closed) throw new SessionError('CLOSED', `session ${this.id} is closed; nothing can be appended`)
    const unit = (this.openUnit ??= { start: this.log.length, depth: 0 })
    unit.depth += 1
    let result: T
    try {
      result = build()
    } finally {
      unit.depth -= 1
      if (unit.depth === 0) {
        this.openUnit = undefined
        const size = this.log.length - unit.start
        if (size > 1) this.unitSizes.set(unit.start, size)
      }
    }
    if (typeof (result as { then?: unknown } | null)?.then === 'function') {
      throw new TypeError(
        `session ${this.id}: unit(build) got a promise from build; a unit must be built synchronously, so its ` +
          `events could not all be appended inside it`,
      )
    }
    return result
  }

  /** The event at `seq`, or `undefined` when there is none. */
  eventAt(seq: number): AnySessionEvent | undefined {
    return this.log[seq]
  }

  /**
   * Validates and logs one event. Surface events need a surface intent, other events must not
   * have one; a replace must cover a contiguous run of current surface positions and cite every
   * shadowed seq. An invalid append throws `SessionError('INVALID_APPEND')` naming the rule and
   * leaves the log untouched.
   *
   * @returns the logged, frozen event.
   */
  append<K extends SessionEventType>(
    type: K,
    data: SessionEventMap[K],
    ...intent: K extends 'user/message' | 'assistant/message' | 'tool/result' ? [SurfaceIntentInput] : []
  ): SessionEvent<K> {
    if (this.closed) throw new SessionError('CLOSED', `session ${this.id} is closed; nothing can be appended`)
    return this.commit(type, data, intent[0], this.now()) as SessionEvent<K>
  }

  /**
   * Replays a stored event (used by stores when reopening). Applies the same rules as
   * {@link append} and additionally requires `seq` to be the next position.
   * @internal
   */
  restore(record: { seq: unknown; type: unknown; data: unknown; surface?: unknown; time: unknown }): AnySessionEvent {
    if (record.seq !== this.log.length)
      invalidAppend(`stored seq ${JSON.stringify(record.seq)} where ${this.log.length} was expected`)
    if (typeof record.time !== 'number' || !Number.isFinite(record.time))
      invalidAppend(`stored time ${JSON.stringify(record.time)} is not a number`)
    return this.commit(record.type, record.data, record.surface, record.time)
  }

  /** The messages of the current surface, oldest first (frozen; the same array until the surface changes). */
  deriveMessages(): readonly Message[] {
    this.view.messages ??= Object.freeze(this.nodeMessages.slice())
    return this.view.messages
  }

  /** The message a surface event contributes, or `null` for events that are not surface events. */
  deriveEventMessage(event: AnySessionEvent): Message | null {
    return isSurfaceEventType(event.type) ? (event.data as { message: Message }).message : null
  }

  /** The latest logged request header, or `undefined` before the first one. */
  requestHeader(): RequestHeader | undefined {
    const event = this.log[this.headerSeq] as SessionEvent<'request/header'> | undefined
    return event?.data.header
  }

  /** Calls `listener` after every append; returns an unsubscribe function. */
  subscribe(listener: SessionListener): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  /** Runs `validator` before every later append; returns a function that removes it. */
  addValidator(validator: AppendValidator): () => void {
    this.validators.add(validator)
    return () => this.validators.delete(validator)
  }

  /** Refuses further appends (stores call this when they release the session). */
  close(): void {
    this.closed = true
  }

  /** Whether {@link close} was called. */
  get isClosed(): boolean {
    return this.closed
  }

  private commit(type: unknown, data: unknown, intent: unknown, time: number): AnySessionEvent {
    const checked = validateAppend({ length: this.log.length, nodes: this.nodes }, type, data, intent)
    const seq = this.log.length
    const record: Record<string, unknown> = { seq, type, data: checked.data, time }
    if (checked.surface) record.surface = checked.surface
    for (const validator of this.validators) validator(record as unknown as AppendCandidate, this)
    const event = deepFreeze(record) as unknown as AnySessionEvent
    this.log.push(event)
    if (event.surface) this.applySurface(event)
    if (event.type === 'request/header') this.headerSeq = seq
    for (const listener of this.listeners) listener(event, this)
    return event
  }

  private applySurface(event: AnySessionEvent): void {
    const intent = event.surface as SurfaceIntent
    const message = this.deriveEventMessage(event) as Message
    this.view = {}
    if (intent.op === 'append') {
      this.nodes.push(event.seq)
      this.nodeMessages.push(message)
      return
    }
    const count = intent.end - intent.start + 1
    const kept = intent.keep ?? []
    // Kept nodes stay as they are, right after the new node: same seqs, same messages.
    const keptMessages = kept.map((seq) => this.nodeMessages[this.nodes.indexOf(seq, intent.start)] as Message)
    this.nodes.splice(intent.start, count, event.seq, ...kept)
    this.nodeMessages.splice(intent.start, count, message, ...keptMessages)
    this.generation += 1
  }
}
