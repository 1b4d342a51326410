import type { Context } from '@cordisjs/core'
import type { CompactionResult } from '@warmfold/compaction'
import type { GenerateOptions, Message } from '@warmfold/llm'
import { createMessage } from '@warmfold/llm'
import type { RequestHeader } from '@warmfold/session'
import type { AgentRequest } from '@warmfold/agent-loop'
import { asRefusal, CompactionRefusal } from '../compaction-refusal.ts'
import { frameCheckpoint } from './compaction-instruction.ts'
import { FoldTransaction } from './fold-transaction.ts'
import type { TransactionInput } from './transaction-input.ts'
import type { SummaryRoute } from './summary-route.ts'
import { maxHeadTokens } from './summary-route.ts'
import type { EngineClock } from '../engine-clock.ts'
import { REAL_TIME_CLOCK, waitOn } from '../engine-clock.ts'
import { planFoldCarry } from './fold-carry.ts'
import type { SurfaceRegion } from './select-region.ts'
import type { SizedSummaryRequest } from './summary-budget.ts'
import { SUMMARY_ATTEMPTS, sizeSummaryRequest } from './summary-budget.ts'
import type { SummaryCallBudget } from './summary-attempts.ts'
import type { SummaryRequestInput } from './summary-request.ts'
import { summaryTarget } from './summary-request.ts'
import { learnSummaryLimit, summaryLimitFor } from './summary-limit-memory.ts'
import { holdsHead } from './replayable-request.ts'

/** How a compaction of a chosen head ended: committed, or why no summary call was made. */
export type HeadOutcome =
  | { readonly kind: 'done'; readonly result: CompactionResult }
  | { readonly kind: 'nothing'; readonly reason: string }
  | { readonly kind: 'unfit'; readonly reason: string }

/** Picks the region from the current node prices and the largest head the budget allows. */
export type ChooseRegion = (prices: readonly number[], maxHeadTokens: number) => SurfaceRegion | null

/** One compaction of a head: its transaction's settings, and how the head is picked and summarized. */
export interface HeadCompaction extends Pick<
  TransactionInput,
  'session' | 'trigger' | 'turn' | 'stability' | 'signal' | 'keepUserMessages' | 'foldAudit'
> {
  readonly header: RequestHeader
  readonly route: SummaryRoute
  readonly choose: ChooseRegion
  readonly buildRequest: (input: SummaryRequestInput) => GenerateOptions
  /** The clock a sync fold is timed on; default real time. */
  readonly clock?: EngineClock
  /**
   * The session's last answered conversation request: replayed whole when the region is a prefix of it
   * (see `SummaryRequestInput.replayMessages`).
   */
  readonly answered?: AgentRequest
}

/** A head ready to be summarized: its region and the summary request sized to its budget. */
export interface PreparedHead {
  readonly kind: 'ready'
  readonly region: SurfaceRegion
  /** Surface tokens of the region at its current prices. */
  readonly regionTokens: number
  /** Of {@link regionTokens}, what the checkpoint replaces: the region less the pinned and kept messages it carries. */
  readonly shadowedTokens: number
  /** The head cap the region was chosen under (tokens): the largest head the summary call's budget takes. */
  readonly maxHeadTokens: number
  readonly sized: SizedSummaryRequest
  /** What the summary calls may do (the policy's `summaryBudget`, the prompt's ceiling, the deadline). */
  readonly budget: SummaryCallBudget
}

/**
 * Picks the head (`choose` with the current prices and `headCap`), checks that folding it is
 * worth a call (something besides pinned and kept messages, more than an empty checkpoint) and
 * builds the summary request through the engine's seam, sized to `limit`.
 * @returns the prepared head, or why no call should be made.
 */
export function prepareHead(
  ctx: Context,
  input: HeadCompaction,
  limit: number,
  headCap: number,
): PreparedHead | { readonly kind: 'nothing' | 'unfit'; readonly reason: string } {
  const { session, header, route } = input
  const prices = ctx.tokenMeter.measure(session).nodes.map((node) => node.tokens)
  const region = input.choose(prices, headCap)
  if (!region) return { kind: 'nothing', reason: 'no balanced head region is left to summarize' }
  const regionTokens = prices.slice(region.start, region.end + 1).reduce((sum, price) => sum + price, 0)
  // Pinned and kept messages stay after the checkpoint: only the rest of the head is folded.
  const carry = planFoldCarry(session, region, (position) => prices[position] as number, input.keepUserMessages)
  if (!carry.foldsHistory) {
    return {
      kind: 'nothing',
      reason:
        `every node of the head (positions ${region.start}..${region.end}) besides a leading checkpoint is ` +
        'pinned or kept, so nothing is left to summarize',
    }
  }
  if (carry.shadowedTokens <= emptyCheckpointTokens(ctx)) {
    const carried = carry.carriedSeqs.length
      ? ` without its ${carry.carriedTokens} tokens of pinned or kept messages`
      : ''
    return {
      kind: 'unfit',
      reason:
        `the head that fits the summary budget (positions ${region.start}..${region.end}, about ` +
        `${carry.shadowedTokens} tokens${carried}) is no larger than an empty checkpoint`,
    }
  }
  const regionMessages = session.deriveMessages().slice(region.start, region.end + 1)
  const build = (replayMessages: readonly Message[]) =>
    input.buildRequest({
      header,
      policy: route.policy,
      regionMessages,
      replayMessages,
      sessionId: session.id,
      signal: input.signal,
    })
  const narrow = sizeSummaryRequest(ctx.tokenMeter, build(regionMessages), limit, route.outputReserveTokens)
  if (typeof narrow === 'string') return { kind: 'unfit', reason: narrow }
  const whole = wholeReplay(input, region)
  const replayed = whole && sizeSummaryRequest(ctx.tokenMeter, build(whole), limit, route.outputReserveTokens)
  const budget = { ...route.policy.summaryBudget, deadlineMs: route.policy.summaryDeadlineMs }
  // The whole request only with the full output cap: a summary cut short to replay more is worse.
  // A larger cap than it leaves room for moves to the region-only replay (`narrower-replay`).
  const sized = replayed && typeof replayed !== 'string' && replayed.maxTokens === narrow.maxTokens ? replayed : narrow
  const narrower =
    sized === narrow ? {} : { narrower: { request: narrow.request, ceilingTokens: narrow.ceilingTokens } }
  return {
    kind: 'ready',
    region,
    regionTokens,
    shadowedTokens: carry.shadowedTokens,
    maxHeadTokens: headCap,
    sized,
    budget: { ...budget, ceilingTokens: sized.ceilingTokens, ...narrower },
  }
}

/**
 * The last answered request's messages, when the summary can replay it whole: the region is a
 * prefix of it (the same seqs) and the summary goes to the conversation's own route.
 */
function wholeReplay(input: HeadCompaction, region: SurfaceRegion): readonly Message[] | undefined {
  const { answered, header, route, session } = input
  if (!answered || region.start !== 0 || !holdsHead(answered, session, region.end)) return undefined
  const target = summaryTarget(header, route.policy)
  return target.provider === header.config.provider && target.model === header.config.model
    ? answered.messages
    : undefined
}

/**
 * Compacts the head `choose` picks, on the turn's path (a sync fold, timed on `input.clock`),
 * with the summary call sized to the route's budget. No call is made when nothing can be
 * chosen, the head is no larger than an empty checkpoint or the prompt leaves too little room.
 * When the provider still rejects the prompt as too long, the budget becomes
 * `SUMMARY_RETRY_RATIO` of the rejected prompt estimate + `maxTokens` and a head at most
 * half as large is chosen, up to {@link SUMMARY_ATTEMPTS} calls, so each retry is strictly
 * smaller than the call before. The session's later summary calls to that target start from the
 * smaller budget (see `learnSummaryLimit`).
 * @throws CompactionRefusal (logged by its bracket) for any other refused call.
 */
export async function compactHead(ctx: Context, input: HeadCompaction): Promise<HeadOutcome> {
  const { header, route } = input
  const target = summaryTarget(header, route.policy)
  let limit = summaryLimitFor(input.session, target, route.limitTokens)
  let headCap = maxHeadTokens(ctx, header, route, limit)
  let rejected: string | undefined
  for (let attempt = 0; attempt < SUMMARY_ATTEMPTS; attempt++) {
    const prepared = prepareHead(ctx, input, limit, headCap)
    if (prepared.kind !== 'ready') {
      if (!rejected) return prepared
      return {
        kind: 'unfit',
        reason:
          prepared.kind === 'nothing' && prepared.reason.startsWith('no balanced')
            ? `no smaller head is left after ${rejected}`
            : `${prepared.reason}, after ${rejected}`,
      }
    }
    const { region, regionTokens, sized, budget } = prepared
    try {
      const transaction = { ...input, region, request: sized.request, budget }
      return { kind: 'done', result: await runTransaction(ctx, transaction, input.clock ?? REAL_TIME_CLOCK) }
    } catch (error) {
      if (!(error instanceof CompactionRefusal) || error.llmCode !== 'CONTEXT_WINDOW_EXCEEDED' || input.signal?.aborted)
        throw error
      // The provider counts more tokens than the estimate: the prompt alone may be too long
      // (halve the head) or prompt + output (shrink the whole budget; a smaller head alone would
      // let maxTokens grow back into the room it frees). Do both.
      rejected =
        `the provider rejected a summary call of about ${sized.promptTokens} prompt + ${sized.maxTokens} ` +
        'output tokens as too long'
      limit = learnSummaryLimit(input.session, target, sized.promptTokens, sized.maxTokens)
      headCap = Math.min(maxHeadTokens(ctx, header, route, limit), Math.floor(regionTokens / 2))
    }
  }
  return { kind: 'unfit', reason: `${rejected}, the last of ${SUMMARY_ATTEMPTS} calls that each asked for less` }
}

/** Tokens of a checkpoint with an empty summary: the least a head can shrink to. */
export function emptyCheckpointTokens(ctx: Context): number {
  return ctx.tokenMeter.estimateMessage(createMessage({ role: 'user', content: frameCheckpoint('') }))
}

/**
 * How many head nodes (positions `0..n-1`, within `0..end`) `passes` summary calls could fold at
 * best: each call replays the previous checkpoint (at least `emptyTokens`) and then the next
 * balanced segments while they fit `maxHead`; a segment that fits no call stops the folding.
 * The bound is optimistic (it ignores the summary's own length), so a head it rules out can
 * certainly not be folded.
 *
 * @param cuts `cuts[k]` is true when a cut before position k is tool-pairing balanced.
 */
export function foldableNodes(
  prices: readonly number[],
  cuts: readonly boolean[],
  end: number,
  maxHead: number,
  passes: number,
  emptyTokens: number,
): number {
  let folded = 0
  for (let pass = 0; pass < passes && folded <= end; pass++) {
    let head = pass === 0 ? 0 : emptyTokens
    let position = folded
    let next = folded
    // Extend by whole balanced segments: a cut inside one would separate a tool call from its result.
    while (position <= end && head + (prices[position] as number) <= maxHead) {
      head += prices[position++] as number
      if (cuts[position]) next = position
    }
    if (next === folded) break
    folded = next
  }
  return folded
}

/**
 * A whole compaction on the turn's path (a sync fold): open the bracket, summarize, commit; any
 * failure abandons it. The wait for the summary goes through `clock` (a virtual clock moves its
 * time meanwhile), and the committed `compaction/end` carries the fold's timing: the
 * conversation waited all of it.
 * @throws CompactionRefusal (already logged) when no checkpoint was committed.
 */
export async function runTransaction(
  ctx: Context,
  input: TransactionInput,
  clock: EngineClock,
): Promise<CompactionResult> {
  const transaction = FoldTransaction.open(ctx, input)
  try {
    const startedAt = clock.now()
    const pending = transaction.summarize()
    await waitOn(clock, pending, Number.POSITIVE_INFINITY)
    const outcome = await pending
    const readyAfterMs = clock.now() - startedAt
    return await transaction.commit(outcome, {
      timing: () => ({
        mode: 'sync',
        startedAt,
        readyAfterMs,
        statusAtThreshold: 'none',
        waitedMs: readyAfterMs,
        stallSavedMs: 0,
        postSwapPrefillTokens: ctx.tokenMeter.measure(input.session).surfaceTokens,
      }),
    })
  } catch (error) {
    const refusal = asRefusal(error, 'commit', 'compaction failed: ')
    transaction.abandon(refusal)
    throw refusal
  }
}
