import type { PromptLayout, RequestApi, SeenRequest } from '@warmfold/cache-ledger/prefix'
import { SegmentInterner } from '@warmfold/cache-ledger/prefix'
import type { RememberedRequest } from '../proxy-exchange.ts'
import type { IndexedRequest } from './conversation-index.ts'
import { ConversationIndex } from './conversation-index.ts'
import type { ExchangeRecord } from './exchange-record.ts'
import type { SessionKey } from './session-key.ts'

/** A session's last conversation request: its layout (interned), and the whole request for the warm room. */
export interface RememberedConversation extends IndexedRequest {
  readonly id: number
  readonly seen: SeenRequest
  readonly remembered: RememberedRequest
  readonly session: ObservedSession
}

/** Running sums over requests: a session's, or the live page's totals. */
export interface Tally {
  requests: number
  compactions: number
  breaks: number
  inputTokens: number
  cacheReadTokens: number
  /** Input-token units; null without prices. */
  cost: number | null
  costUsd: number | null
}

export function emptyTally(): Tally {
  return { requests: 0, compactions: 0, breaks: 0, inputTokens: 0, cacheReadTokens: 0, cost: null, costUsd: null }
}

/** Whether `record` is a break: a conversation request with a cause other than `none` and `first`. */
export function isBreak(record: ExchangeRecord): boolean {
  return record.kind === 'conversation' && !!record.cause && record.cause !== 'none' && record.cause !== 'first'
}

/** Adds one exchange's record to `tally`. */
export function addToTally(tally: Tally, record: ExchangeRecord): void {
  tally.requests++
  if (record.usage) {
    tally.inputTokens += record.usage.inputTokens
    tally.cacheReadTokens += record.usage.cacheReadTokens
  }
  if (record.cost) {
    tally.cost = (tally.cost ?? 0) + record.cost.units
    if (record.cost.usd !== null) tally.costUsd = (tally.costUsd ?? 0) + record.cost.usd
  }
  if (record.kind === 'compaction') tally.compactions++
  else if (isBreak(record)) tally.breaks++
}

/** One session: its requests' sums and what it remembers. */
export interface ObservedSession extends Tally {
  readonly key: string
  /** `header …`, `body …` or `containment`. */
  readonly by: string
  readonly api: RequestApi
  readonly agent: string
  lastAt: number
  /** The last conversation request the provider answered. */
  last?: RememberedConversation
  /** A summary request was observed since `last`. */
  summarySince: boolean
}

/**
 * The sessions, bounded: the least recently active goes first when there are more than
 * `maxSessions`, and a session idle longer than `forgetAfterMs` is dropped, each with what it
 * remembers (its last conversation request: the body, the interned layout, its index entry).
 * Layouts of requests that are not remembered are released at once, so memory follows the live
 * sessions, not the requests seen.
 */
export class SessionTable {
  /** In order of last activity, oldest first. */
  private readonly sessions = new Map<string, ObservedSession>()
  readonly interner = new SegmentInterner()
  readonly index = new ConversationIndex<RememberedConversation>()
  private containmentSessions = 0

  constructor(
    private readonly maxSessions: number,
    private readonly forgetAfterMs: number,
  ) {}

  /**
   * The session of a request: the one `named` names; else the session whose last conversation
   * request's messages the request extends or repeats (prefix containment, within `forgetAfterMs`);
   * else, after a summary request, the session of that summary whose tools and system the request
   * keeps (an agent's first request after its compaction replaces the history); else a new one.
   */
  place(
    api: RequestApi,
    named: SessionKey | undefined,
    layout: PromptLayout,
    at: number,
    agent: string,
  ): ObservedSession {
    let session = named ? this.sessions.get(named.key) : this.contained(api, layout, at)
    if (!session) {
      const key = named?.key ?? `${api} containment #${++this.containmentSessions}`
      session = {
        key,
        by: named?.by ?? 'containment',
        api,
        agent,
        lastAt: at,
        ...emptyTally(),
        summarySince: false,
      }
    }
    // Most recently active last.
    this.sessions.delete(session.key)
    this.sessions.set(session.key, session)
    session.lastAt = Math.max(session.lastAt, at)
    this.sweep(at)
    return session
  }

  /** Makes `conversation` its session's last conversation request (the one before is forgotten). */
  remember(conversation: RememberedConversation): void {
    const session = conversation.session
    if (session.last) this.forget(session.last)
    session.last = conversation
    session.summarySince = false
    this.index.add(conversation)
  }

  /** Releases the interned texts of a layout no one keeps. */
  release(layout: PromptLayout): void {
    for (const segment of layout.segments) this.interner.release(segment.id)
  }

  /** The live sessions, most recently active first. */
  list(): ObservedSession[] {
    return [...this.sessions.values()].toReversed()
  }

  /** Drops idle sessions and the least recently active beyond the bound. */
  sweep(now: number): void {
    for (const session of this.sessions.values()) {
      if (this.sessions.size <= this.maxSessions && now - session.lastAt <= this.forgetAfterMs) break
      this.drop(session)
    }
  }

  private contained(api: RequestApi, layout: PromptLayout, at: number): ObservedSession | undefined {
    const extended = this.index.longestPrefix(api, layout, at, this.forgetAfterMs, {
      accept: (entry) => this.sessions.get(entry.session.key) === entry.session,
    })
    if (extended) return extended.session
    const head = layout.segments.slice(0, layout.headSegments).map((segment) => segment.id)
    for (const session of this.list()) {
      if (!session.summarySince || session.api !== api || !session.last || at - session.lastAt > this.forgetAfterMs)
        continue
      const last = session.last.layout
      if (
        last.headSegments === head.length &&
        head.every((id, position) => last.segments[position]?.id === id) &&
        session.by === 'containment'
      )
        return session
    }
    return undefined
  }

  private drop(session: ObservedSession): void {
    this.sessions.delete(session.key)
    if (session.last) this.forget(session.last)
    session.last = undefined
  }

  private forget(conversation: RememberedConversation): void {
    this.index.remove(conversation)
    this.release(conversation.layout)
  }
}
