import type { Session } from '@warmfold/session'
import type { CacheBreakCause, Comparison, PrefixMatch } from './prefix/index.ts'

/**
 * A durable rewrite logged in a session: a fold (`compaction/summary`) or a prune
 * (`compaction/prune`) from surface position `start`.
 */
export interface LoggedRewrite {
  readonly kind: 'fold' | 'prune'
  readonly start: number
}

/** The folds and prunes logged in `session` at seqs `from..to-1`. */
export function rewritesBetween(session: Session, from: number, to: number): LoggedRewrite[] {
  const rewrites: LoggedRewrite[] = []
  for (let seq = Math.max(0, from); seq < to; seq++) {
    const event = session.eventAt(seq)
    // Compared as strings: the compaction events are declared by @warmfold/compaction, which this
    // package does not depend on.
    const type: string | undefined = event?.type
    if (!event || (type !== 'compaction/summary' && type !== 'compaction/prune')) continue
    const range = (event.data as { shadowedRange?: { start?: unknown } }).shadowedRange
    rewrites.push({
      kind: type === 'compaction/summary' ? 'fold' : 'prune',
      start: typeof range?.start === 'number' ? range.start : 0,
    })
  }
  return rewrites
}

/** What decides the cause of a request's break, before the provider's answer is known. */
export interface CauseFacts {
  readonly comparison: Comparison
  readonly match: PrefixMatch
  /** The compared request was sent longer ago than the TTL (its prefix cannot be live any more). */
  readonly referenceExpired: boolean
  /** Folds and prunes logged between the compared request and this one. */
  readonly rewrites: readonly LoggedRewrite[]
  /**
   * Whether the request was compared with an earlier request of its own session. Without one it
   * was compared with the family's best match (another conversation): departing from it breaks
   * nothing, so only expiry can be a cause.
   */
  readonly ownSession: boolean
}

/**
 * The cause of a break, from the prompt alone. Expiry comes first when it cost characters before
 * the point where the prompt changed (the provider could not have read them anyway); then, for a
 * request compared with its own session's previous one, the part that differs: the envelope or
 * system prompt (`envelope`), the tools (`tools`), or a message, explained by the nearest fold or
 * prune logged in between at or before its position,
 * else `unknown`.
 */
export function structuralCause(facts: CauseFacts): CacheBreakCause {
  const { comparison, match } = facts
  const divergence = comparison.divergence
  const kept =
    divergence.part === 'none' || divergence.part === 'first'
      ? Math.max(comparison.sharedChars, match.chars)
      : (divergence.charOffset ?? 0)
  if ((match.chars > match.liveChars || facts.referenceExpired) && match.liveChars < kept) return 'expired'
  if (!facts.ownSession) return 'none'
  switch (divergence.part) {
    case 'envelope':
    case 'system':
      return 'envelope'
    case 'tools':
      return 'tools'
    case 'message':
      return rewriteCause(facts.rewrites, divergence.index ?? 0)
    default:
      return 'none'
  }
}

/** The nearest rewrite logged at or before message `index` (a fold when both start there), else `unknown`. */
function rewriteCause(rewrites: readonly LoggedRewrite[], index: number): CacheBreakCause {
  let best: LoggedRewrite | undefined
  for (const rewrite of rewrites) {
    if (rewrite.start > index) continue
    if (!best || rewrite.start > best.start || (rewrite.start === best.start && rewrite.kind === 'fold')) best = rewrite
  }
  return best ? best.kind : 'unknown'
}
