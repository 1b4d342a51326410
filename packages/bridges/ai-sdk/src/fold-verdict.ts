import { expectedCacheTokens, formatCount, providerMissed } from '@warmfold/cache-ledger/prefix'
import { bodyValue, compareBodies } from './body-replay.ts'
import type { ColdCause, FoldReport } from './reports.ts'
import type { Lineage } from './sent-requests.ts'
import { describeRewrite } from './sent-requests.ts'
import type { SummaryOutcome } from './summary-calls.ts'

/** What decides whether a fold's summary call read the previous request's cache. */
export interface VerdictInput {
  readonly lineage: Lineage
  /** The previous request the summary call replays (absent: the call replayed itself, cold). */
  readonly base: Lineage['previous']
  readonly outcome: SummaryOutcome
  /** Characters of the summary request as the cache ledger fingerprints it (`RequestFingerprint.chars`). */
  readonly summaryChars: number
  /** The middleware's `providerToleranceTokens`. */
  readonly toleranceTokens: number
}

/** The verdict of a fold: `warm`, or cold with its cause and a sentence. */
export type FoldVerdict = Pick<FoldReport, 'warm' | 'attempts'> & Partial<FoldReport>

/**
 * Whether the summary call read the previous request's cache, judged on what the provider
 * received and reported for the first summary call (a later rung of the ladder reads what it
 * wrote): its body must replay the previous body plus one instruction, and its cache read must not
 * be a miss by the cache ledger's rule (`providerMissed`: the previous request's characters, in
 * the provider's tokens at the call's own ratio, exceed the read by more than the tolerance and
 * 5 %), nor zero.
 */
export function foldVerdict({ lineage, base, outcome, summaryChars, toleranceTokens }: VerdictInput): FoldVerdict {
  const first = outcome.calls[0]
  const bodies = base && first ? compareBodies(base.body, bodyValue(first.requestBody)) : undefined
  const input = first?.usage?.inputTokens
  const cacheRead = input?.cacheRead
  const facts = {
    expectedChars: base?.fingerprint.chars ?? 0,
    promptChars: summaryChars,
    promptTokens: input?.total,
    cachedTokens: cacheRead,
  }
  const missed = !!base && providerMissed(facts, toleranceTokens)
  let cold: { coldCause: ColdCause; coldReason: string } | undefined
  if (!base)
    cold =
      lineage.relation === 'host-rewrite' && lineage.divergence
        ? {
            coldCause: 'host-rewrite',
            coldReason: `the host rewrote its history since the last request: ${describeRewrite(lineage.divergence)}`,
          }
        : {
            coldCause: 'first',
            coldReason:
              'no earlier request of this conversation to replay: the request was already above the threshold',
          }
  else if (bodies && !bodies.replay)
    cold = {
      coldCause: 'body-departs',
      coldReason: `the summary body departs from the previous request's body at ${bodies.firstDifferingPath}`,
    }
  else if (cacheRead === 0)
    cold = { coldCause: 'provider', coldReason: 'the provider reported no cache read for the summary call' }
  else if (missed) {
    const expected = Math.round(expectedCacheTokens(facts) as number)
    cold = {
      coldCause: 'provider',
      coldReason:
        `the provider read ${formatCount(cacheRead ?? 0)} cached tokens for the summary call where the previous ` +
        `request it replays holds about ${formatCount(expected)}: short by more than providerToleranceTokens ` +
        `(${formatCount(toleranceTokens)}) and 5 %`,
    }
  }
  const previousPromptTokens = base?.usage?.inputTokens.total
  const usage = outcome.calls.at(-1)?.usage
  return {
    warm: !!bodies?.replay && !cold,
    ...(bodies?.appendedAt ? { appendedAt: bodies.appendedAt } : {}),
    ...(bodies?.firstDifferingPath ? { firstDifferingPath: bodies.firstDifferingPath } : {}),
    ...cold,
    ...(previousPromptTokens === undefined ? {} : { previousPromptTokens }),
    attempts: outcome.attempts,
    ...(usage ? { usage } : {}),
  }
}
