import type { Message, TokenUsage } from '@warmfold/llm'
import { canonicalJson, promptTokensOf } from '@warmfold/llm'
import type { AnySessionEvent, RequestHeader, Session } from '@warmfold/session'
import { canonicalHeader } from '@warmfold/session'
import type { TokenBaseline, TokenMeasurement } from './token-measurement.ts'
import { createTokenMeasurement } from './token-measurement.ts'

/** How a {@link SessionPriceState} prices what it reads from the log. */
export interface SessionPricer {
  /** Estimated tokens of one surface node's message. */
  message(message: Message): number
  /** Estimated tokens of a header's system prompt plus tools. */
  envelope(header: RequestHeader): number
}

/** One distinct canonical envelope seen in the session; compared by identity. */
interface Envelope {
  readonly tokens: number
}

/** The latest `assistant/message` with a prompt total, while it is still usable. */
interface Anchor {
  readonly seq: number
  readonly reportedPromptTokens: number
  /** The envelope in force when it was logged; `undefined` when no header had been logged. */
  readonly envelope: Envelope | undefined
  /** Sum of the prices of every node appended at or after `seq`. */
  appendedTokens: number
}

/** Marks a seq whose event is not a surface event in {@link SessionPriceState}'s price table. */
const NOT_A_NODE = -1

/**
 * The incremental pricing state of one session for one meter.
 *
 * It replays the log exactly as `Session` applies it, but only the events appended since the
 * last call: a `Session` never changes a logged event and seqs are dense, so the state after
 * processing events `0..n-1` is final for that prefix.
 *
 * Invariants (after {@link catchUp}): `nodes` equals `session.surface.nodes`;
 * `surfaceTokens` is the sum of `prices[seq]` over `nodes`; `anchor`, when set, has no
 * replace at or after its seq.
 */
export class SessionPriceState {
  /** Number of log events applied so far. */
  private processed = 0
  /** Surface node seqs in request order, mirroring `Session`'s own list. */
  private nodes: number[] = []
  /** Whether a measurement still reads `nodes` lazily (so a replace must not splice it in place). */
  private nodesShared = false
  /** Price by seq; {@link NOT_A_NODE} for events that are not surface events. */
  private readonly prices: number[] = []
  private surfaceTokens = 0
  private envelope: Envelope | undefined
  /** Envelopes by canonical header JSON, so a header that comes back is neither re-priced nor treated as new. */
  private readonly envelopes = new Map<string, Envelope>()
  private anchor: Anchor | undefined
  /** The measurement of the current prefix, reused until a new event arrives. */
  private measurement: TokenMeasurement | undefined

  constructor(private readonly pricer: SessionPricer) {}

  /**
   * Applies every event logged since the last call: O(k) for k new events, plus a copy of the
   * node list for a replace (see the README's incremental cost). A pricing error (a bad
   * tokenizer result) leaves the state at the last fully applied event.
   */
  catchUp(session: Session): void {
    const length = session.length
    while (this.processed < length) {
      const event = session.eventAt(this.processed)
      if (!event)
        throw new RangeError(
          `TokenMeter: session ${session.id} has no event at seq ${this.processed} below its length ${length}`,
        )
      this.apply(session, event)
      this.processed += 1
      this.measurement = undefined
    }
  }

  /** The measurement of the session as logged now (O(1) once caught up). */
  measure(session: Session): TokenMeasurement {
    this.catchUp(session)
    this.measurement ??= this.snapshot()
    return this.measurement
  }

  /**
   * The price of the surface event at `seq` (current or shadowed).
   * @throws RangeError when `seq` is not in the log or is not a surface event.
   */
  priceOf(session: Session, seq: number): number {
    this.catchUp(session)
    if (!Number.isInteger(seq) || seq < 0 || seq >= this.prices.length) {
      throw new RangeError(
        `TokenMeter.priceOf: seq ${String(seq)} is not in session ${session.id}, which has ${this.prices.length} ` +
          `events`,
      )
    }
    const price = this.prices[seq] as number
    if (price === NOT_A_NODE) {
      throw new RangeError(
        `TokenMeter.priceOf: seq ${seq} of session ${session.id} is a ${session.eventAt(seq)?.type} event, not a ` +
          `surface node`,
      )
    }
    return price
  }

  private apply(session: Session, event: AnySessionEvent): void {
    // Every price is computed before anything is mutated, so a throwing tokenizer leaves the
    // state consistent and the next call retries this same event.
    const intent = event.surface
    if (!intent) {
      if (event.type === 'request/header') this.envelope = this.envelopeOf(event.data.header)
      this.prices.push(NOT_A_NODE)
      return
    }
    const price = this.pricer.message(session.deriveEventMessage(event) as Message)
    this.prices.push(price)
    if (intent.op === 'append') {
      this.nodes.push(event.seq)
      this.surfaceTokens += price
      if (this.anchor) this.anchor.appendedTokens += price
      if (event.type === 'assistant/message') {
        const reported = reportedPromptTokens(event.data.usage)
        if (reported !== undefined)
          this.anchor = {
            seq: event.seq,
            reportedPromptTokens: reported,
            envelope: this.envelope,
            appendedTokens: price,
          }
      }
      return
    }
    const count = intent.end - intent.start + 1
    // Kept nodes stay on the surface (a checkpoint carrying pinned messages): only the shadowed
    // ones leave the total.
    const kept = intent.keep ?? []
    for (let position = intent.start; position <= intent.end; position++) {
      const seq = this.nodes[position] as number
      if (!kept.includes(seq)) this.surfaceTokens -= this.prices[seq] as number
    }
    this.surfaceTokens += price
    if (this.nodesShared) {
      // An earlier measurement still reads this array lazily: leave it as it was.
      this.nodes = this.nodes.toSpliced(intent.start, count, event.seq, ...kept)
      this.nodesShared = false
    } else {
      this.nodes.splice(intent.start, count, event.seq, ...kept)
    }
    // The surface no longer only grew since the anchor's request, so its reported total no
    // longer describes a prefix of the next request. This also covers an assistant message
    // with usage that is itself a replace: it is the latest candidate, and it is unusable.
    this.anchor = undefined
  }

  private envelopeOf(header: RequestHeader): Envelope {
    // Same key as `headerEquals`: two headers share an envelope exactly when it says equal.
    const key = canonicalJson(canonicalHeader(header))
    let envelope = this.envelopes.get(key)
    if (!envelope) this.envelopes.set(key, (envelope = { tokens: this.pricer.envelope(header) }))
    return envelope
  }

  private snapshot(): TokenMeasurement {
    const envelopeTokens = this.envelope?.tokens ?? 0
    const anchor = this.anchor
    const baseline: TokenBaseline =
      anchor && anchor.envelope === this.envelope
        ? {
            kind: 'usage',
            tokens: anchor.reportedPromptTokens + anchor.appendedTokens,
            anchorSeq: anchor.seq,
            reportedPromptTokens: anchor.reportedPromptTokens,
          }
        : { kind: 'heuristic', tokens: envelopeTokens + this.surfaceTokens }
    // Appends only push past `count` and prices are never rewritten, so reading these two
    // arrays later still gives this moment's surface; a replace copies `nodes` first.
    const nodes = this.nodes
    const count = nodes.length
    const prices = this.prices
    this.nodesShared = true
    return createTokenMeasurement({
      surfaceTokens: this.surfaceTokens,
      envelopeTokens,
      baseline,
      nodes: () =>
        Array.from({ length: count }, (_, index) => {
          const seq = nodes[index] as number
          return Object.freeze({ seq, tokens: prices[seq] as number })
        }),
    })
  }
}

/** A well-formed prompt total (finite, `>= 0`) from logged usage, or `undefined`. */
function reportedPromptTokens(usage: TokenUsage | undefined): number | undefined {
  // Logged data is plain JSON written by any plugin: guard against shapes promptTokensOf
  // would mis-add (strings concatenate) rather than trust the static type.
  if (typeof usage !== 'object' || usage === null) return undefined
  const total = promptTokensOf(usage)
  return typeof total === 'number' && Number.isFinite(total) && total >= 0 ? total : undefined
}
