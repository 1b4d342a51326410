import type { GenerateOptions, LlmFinish, Message } from '@warmfold/llm'
import { canonicalJson, promptTokensOf } from '@warmfold/llm'
import type { RequestHeader, Session, SessionEvent, SessionEventType } from '@warmfold/session'
import type { CacheGuardData, CacheObservationData } from './cache-events.ts'
import { rewritesBetween, structuralCause } from './break-cause.ts'
import type { CacheBreakCause, Comparison, PrefixMatch, RequestFingerprint } from './prefix/index.ts'
import {
  compareRequests,
  compareWithFamily,
  describeSummaryDivergence,
  Fingerprinter,
  PrefixIndex,
  providerMissed,
} from './prefix/index.ts'

/** A request the ledger saw being sent, waiting for the end of its stream. */
export interface SentRequest {
  readonly print: RequestFingerprint
  readonly purpose: string
  readonly provider: string
  readonly model: string
  readonly sessionId?: string
  /** Clock time when it was sent. */
  readonly sentAt: number
  /** The session's log length when it was sent. */
  readonly sentSeq: number
  readonly match: PrefixMatch
  readonly comparison: Comparison
  /** The cause from the prompt alone (the provider's answer may still make it `provider`). */
  readonly cause: CacheBreakCause
  /**
   * A fork's first request, compared with its parent's last conversation request
   * (`GenerateOptions.cacheSessionId`).
   */
  readonly fork: boolean
  /** For a summary call that is not a warm replay of the last conversation request: what the guard reports. */
  readonly guard?: Pick<CacheGuardData, 'divergence' | 'reason'>
}

/** The last conversation request of a session: what its next requests are compared with. */
type Reference = Pick<SentRequest, 'print' | 'sentAt' | 'sentSeq'>

export interface ObserverSettings {
  /**
   * Cached tokens may fall this far (and 5 %) short of the expected prefix before the provider is
   * blamed (`providerMissed`).
   */
  readonly toleranceTokens: number
  /** Prompt parts and sessions not seen for this long are forgotten. */
  readonly forgetAfterMs: number
}

/**
 * The ledger's bookkeeping, without cordis: fingerprints each request when it is sent, compares
 * it with what it should reuse, and turns it into a `cache/observation` when its stream ends.
 *
 * A request is recorded as sent (in the prefix index and as its session's last conversation
 * request) only when its stream ends, whatever the ending: the provider received it. A request
 * stopped before the adapter (a refusing guard, a failing hook) leaves no trace.
 */
export class RequestObserver {
  private readonly fingerprinter = new Fingerprinter(canonicalJson)
  private readonly index = new PrefixIndex()
  private readonly references = new Map<string, Reference>()
  private lastSweep: number | undefined

  constructor(private readonly settings: ObserverSettings) {}

  /**
   * Examines `request` as it is sent at `now`. `session` is the open session named by
   * `request.sessionId`, when there is one; `ttlMs` is the cache TTL of its model.
   */
  send(request: GenerateOptions, session: Session | undefined, ttlMs: number, now: number): SentRequest {
    const print = this.fingerprinter.fingerprint(request)
    const match = this.index.match(print, now, ttlMs)
    const purpose = request.purpose ?? 'unspecified'
    const replay = purpose === 'compaction'
    const sessionId = request.sessionId
    const sentSeq = session?.length ?? 0
    let reference = sessionId === undefined ? undefined : this.references.get(sessionId)
    // A fork's first request replays its parent's last conversation request plus its task: that
    // is the prefix it must read (it has no request of its own yet).
    const parent =
      !reference &&
      purpose === 'conversation' &&
      request.cacheSessionId !== undefined &&
      request.cacheSessionId !== sessionId
        ? this.references.get(request.cacheSessionId)
        : undefined
    if (parent) reference = parent
    // A summary call before any conversation request of this process (a resumed session): the
    // request the conversation would send now is what the summary call must replay.
    if (!reference && replay && session) reference = this.currentRequest(session, now)
    const comparison = reference ? compareRequests(reference.print, print, replay) : compareWithFamily(print, match)
    const rewrites = reference && session && !parent ? rewritesBetween(session, reference.sentSeq, sentSeq) : []
    const structural = structuralCause({
      comparison,
      match,
      referenceExpired: !!reference && now - reference.sentAt > ttlMs,
      rewrites,
      ownSession: !!reference,
    })
    // Departing from the parent's request is the fork's own break (expiry stays expiry).
    const cause = parent && structural !== 'none' && structural !== 'expired' ? 'fork' : structural
    const part = comparison.divergence.part
    const guard =
      replay && reference && part !== 'none' && part !== 'first'
        ? { divergence: comparison.divergence, reason: describeSummaryDivergence(comparison, cause) }
        : undefined
    return {
      print,
      purpose,
      provider: request.provider,
      model: request.model,
      sessionId,
      sentAt: now,
      sentSeq,
      match,
      comparison,
      cause,
      fork: !!parent,
      guard,
    }
  }

  /** Records `sent` as received by the provider and returns its observation. */
  finish(sent: SentRequest, outcome: LlmFinish, now: number): CacheObservationData {
    this.index.record(sent.print, sent.sentAt)
    if (sent.purpose === 'conversation' && sent.sessionId !== undefined)
      this.references.set(sent.sessionId, { print: sent.print, sentAt: sent.sentAt, sentSeq: sent.sentSeq })
    this.sweep(now)
    const usage = outcome.usage
    const expected = sent.match.liveChars
    const facts = {
      expectedChars: expected,
      promptChars: sent.print.chars,
      promptTokens: usage && promptTokensOf(usage),
      cachedTokens: usage?.cacheReadTokens,
    }
    const missed = sent.cause === 'none' && providerMissed(facts, this.settings.toleranceTokens)
    const cause = missed ? (sent.fork ? 'fork' : 'provider') : sent.cause
    // Every key in one order, unreported buckets undefined (the log drops them): one object shape.
    return {
      purpose: sent.purpose,
      provider: sent.provider,
      model: sent.model,
      uncached: usage?.inputTokens,
      cached: usage?.cacheReadTokens,
      written: usage?.cacheWriteTokens,
      output: usage?.outputTokens,
      chars: sent.print.chars,
      expected,
      divergence: sent.comparison.divergence,
      cause,
      idleMs: sent.match.idleMs,
      finish: outcome.finishReason,
      at: sent.sentAt,
    }
  }

  /**
   * Learns what a session's next request should reuse from its log, for a session this observer
   * has not seen send (a restart, another process): its last logged conversation request, rebuilt
   * from the `request/header` in force then and the surface nodes logged before it, sent at the
   * observation's `at` (or, on a ledger whose clock is the event clock, at the event's time). So
   * the first request after a restart is compared with it like any other: a read, `expired`
   * past the TTL, `provider` when the provider lost it. Nothing is learnt when the rebuilt
   * request does not have the logged length (the log does not hold the request exactly), or
   * when no time can be trusted.
   * @returns whether a reference was restored.
   */
  restore(session: Session, eventTimes: boolean): boolean {
    if (this.references.has(session.id)) return false
    const observation = lastEvent(session, session.length, 'cache/observation', isConversation)
    if (!observation) return false
    const data = observation.data
    const sentAt = data.at ?? (eventTimes ? observation.time : undefined)
    // The request header in force then: the last one logged before it.
    const header = lastEvent(session, observation.seq, 'request/header')?.data.header
    if (sentAt === undefined || !header) return false
    const nodes = session.surface.nodes
    const derived = session.deriveMessages()
    const messages = derived.filter((_message, position) => (nodes[position] as number) < observation.seq)
    let print: RequestFingerprint
    try {
      print = this.fingerprint(header, messages)
    } catch {
      return false
    }
    if (print.chars !== data.chars) return false
    this.index.record(print, sentAt)
    this.references.set(session.id, { print, sentAt, sentSeq: observation.seq })
    return true
  }

  private currentRequest(session: Session, now: number): Reference | undefined {
    const header = session.requestHeader()
    return header && { print: this.fingerprint(header, session.deriveMessages()), sentAt: now, sentSeq: session.length }
  }

  /** The request `header` sends with `messages`. */
  private fingerprint(header: RequestHeader, messages: readonly Message[]): RequestFingerprint {
    return this.fingerprinter.fingerprint({ ...header.config, system: header.system, tools: header.tools, messages })
  }

  /** Forgets old prompt parts and sessions, at most eight times per `forgetAfterMs` of clock time. */
  private sweep(now: number): void {
    const forget = this.settings.forgetAfterMs
    if (this.lastSweep !== undefined && now - this.lastSweep < forget / 8) return
    this.lastSweep = now
    this.index.sweep(now, forget)
    for (const [sessionId, reference] of this.references)
      if (now - reference.sentAt > forget) this.references.delete(sessionId)
  }

  /** Prompt-part nodes held (for tests of forgetting). */
  get indexSize(): number {
    return this.index.size
  }

  /** Sessions whose last conversation request is held. */
  get sessionCount(): number {
    return this.references.size
  }
}

const isConversation = (event: SessionEvent<'cache/observation'>) => event.data.purpose === 'conversation'

/** The last `type` event logged in `session` before `seq` that `accept` takes. */
function lastEvent<T extends SessionEventType>(
  session: Session,
  seq: number,
  type: T,
  accept: (event: SessionEvent<T>) => boolean = () => true,
): SessionEvent<T> | undefined {
  for (let at = seq - 1; at >= 0; at--) {
    const event = session.eventAt(at) as SessionEvent<T> | undefined
    if (event?.type === type && accept(event)) return event
  }
  return undefined
}
