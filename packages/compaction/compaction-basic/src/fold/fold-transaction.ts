import { randomUUID } from 'node:crypto'
import type { Context } from '@cordisjs/core'
import type {
  CompactionResult,
  CompactionTrigger,
  DiscardedFold,
  FoldTiming,
  SummaryAttempt,
} from '@warmfold/compaction'
import { checkpointSource } from '@warmfold/compaction'
import type { GenerateOptions, Message } from '@warmfold/llm'
import { createMessage, textBlock } from '@warmfold/llm'
import type { Session } from '@warmfold/session'
import { frameCheckpoint } from './compaction-instruction.ts'
import { CompactionRefusal } from '../compaction-refusal.ts'
import type { FoldCarry, KeepUserMessages } from './fold-carry.ts'
import { planFoldCarry } from './fold-carry.ts'
import type { EngineClock } from '../engine-clock.ts'
import type { ResolvedFoldAudit } from '../config/fold-audit-config.ts'
import { FoldAuditor } from './fold-auditor.ts'
import { waitOn } from '../engine-clock.ts'
import { assertCurrent, assertShrinks } from './fold-checks.ts'
import { runCompactionAfter } from './run-compaction-after.ts'
import type { SurfaceRegion } from './select-region.ts'
import type { SummaryCallBudget } from './summary-attempts.ts'
import type { SummaryOutcome } from './summarize.ts'
import { summarize } from './summarize.ts'

/** One compaction of a selected region. */
export interface TransactionInput {
  readonly session: Session
  readonly region: SurfaceRegion
  readonly trigger: CompactionTrigger | 'manual'
  /** The running turn, or `null` between turns (manual). */
  readonly turn: number | null
  /**
   * `whole-surface`: nothing may change while summarizing (automatic paths run inside a step).
   * `selected-span`: appends and rewrites after the span are tolerated (manual compaction, and a
   * background fold, which the conversation goes on beside).
   */
  readonly stability: 'whole-surface' | 'selected-span'
  readonly signal?: AbortSignal
  /**
   * The summary request, built from the region's messages of the current surface in the same
   * tick (no await between) and sized to its budget (`sizeSummaryRequest`).
   */
  readonly request: GenerateOptions
  /** What the summary calls may do when an answer spends its output cap without a summary. */
  readonly budget: SummaryCallBudget
  /** Keep the newest user-authored messages of the region verbatim after the checkpoint, up to this budget. */
  readonly keepUserMessages?: KeepUserMessages
  /** The audit and the artifact trail (engine config `audit`, `artifactTrail`); without it, neither. */
  readonly foldAudit?: ResolvedFoldAudit
}

/** What a committed fold adds to its `compaction/end`. */
export interface CommitExtras {
  /** How long the fold kept the conversation waiting; computed once the checkpoint landed. */
  readonly timing?: (committed: { readonly checkpointSeq: number }) => FoldTiming
}

/**
 * One compaction bracket, in phases, so a fold can be summarized beside the conversation and
 * committed later: {@link FoldTransaction.open} appends `compaction/start` (the lock),
 * {@link summarize} makes the summary call, {@link commit} runs the `compaction/after` hook,
 * re-checks the region and appends one unit of `compaction/summary`, the checkpoint
 * `user/message` replacing the region (immediately after its pricing event; it keeps the carried
 * nodes, see `planFoldCarry`) and the messages the hook queued, then `compaction/end`. Any failure
 * after the start ends the bracket with `compaction/end { error }` and no checkpoint (see
 * {@link abandon}): the log stays valid and every original stays on it.
 */
export class FoldTransaction {
  /** The surface when the bracket opened. */
  private readonly surfaceAtOpen: Session['surface']
  /** The region's seqs when the bracket opened: what the checkpoint must replace. */
  readonly regionSeqs: readonly number[]
  /**
   * Every summary call made so far, a call in flight as `aborted`: on `compaction/summary`, or on
   * `compaction/end` when refused.
   */
  private readonly attempts: SummaryAttempt[] = []
  private ended = false
  /** The region's audit and artifact trail, when the engine runs them. */
  private readonly auditor?: FoldAuditor
  /** The last carry planned, and the log length it was planned at. */
  private plannedCarry?: { readonly logLength: number; readonly carry: FoldCarry }

  private constructor(
    private readonly ctx: Context,
    readonly input: TransactionInput,
    readonly compactionId: string,
    readonly startSeq: number,
  ) {
    this.surfaceAtOpen = input.session.surface
    this.regionSeqs = this.surfaceAtOpen.nodes.slice(input.region.start, input.region.end + 1)
    if (input.foldAudit)
      // The meter once per fold: each `ctx.tokenMeter` goes through cordis's service lookup,
      // and the trail's fit asks a dozen times.
      this.auditor = new FoldAuditor(
        ctx.tokenMeter,
        input.session,
        this.regionSeqs,
        input.foldAudit,
        () => this.planCarry().shadowedTokens,
      )
  }

  /** Appends `compaction/start`: the bracket is open until {@link commit} or {@link abandon}. */
  static open(ctx: Context, input: TransactionInput): FoldTransaction {
    const compactionId = randomUUID()
    const start = input.session.append('compaction/start', { compactionId, turn: input.turn, trigger: input.trigger })
    return new FoldTransaction(ctx, input, compactionId, start.seq)
  }

  /**
   * Makes the summary call (see `summarize`).
   * @throws CompactionRefusal (the bracket stays open: call {@link abandon}).
   */
  async summarize(signal = this.input.signal): Promise<SummaryOutcome> {
    // The call carries `signal` whatever the request was built with: a background fold's
    // request is built before its own abort signal exists, and a discard must stop its call.
    const request =
      signal === undefined || this.input.request.signal === signal
        ? this.input.request
        : { ...this.input.request, signal }
    return summarize(this.ctx, request, this.input.budget, this.attempts)
  }

  /** The calls made so far, in order. */
  get summaryAttempts(): readonly SummaryAttempt[] {
    return [...this.attempts]
  }

  /**
   * Checks that `outcome` can replace the region now: the bracket was not cancelled, the region
   * is unchanged (and, for `whole-surface` stability, the whole surface) and the checkpoint is
   * smaller than what it folds.
   * @throws CompactionRefusal naming what changed.
   */
  check(outcome: SummaryOutcome): void {
    assertCurrent(this.input.session, this.input, this.surfaceAtOpen, this.regionSeqs)
    assertShrinks(this.ctx.tokenMeter.estimateMessage(this.checkpointOf(outcome)), this.planCarry())
  }

  /**
   * Commits `outcome`: the `compaction/after` hook, the checks again, the unit of summary,
   * checkpoint and hook messages, and `compaction/end`.
   * @throws CompactionRefusal (the bracket stays open: call {@link abandon}).
   */
  async commit(outcome: SummaryOutcome, extras: CommitExtras = {}): Promise<CompactionResult> {
    const { session, region, turn } = this.input
    const { compactionId } = this
    this.check(outcome)
    let appended
    try {
      const auditor = this.auditor
      const addTrailEntry = auditor?.settings.trail.enabled
        ? (text: string) => auditor.addHostEntry(text, compactionId)
        : undefined
      appended = await runCompactionAfter(
        this.ctx,
        {
          session,
          compactionId,
          trigger: this.input.trigger,
          summary: outcome.text,
          carriedSeqs: this.planCarry().carriedSeqs,
          signal: this.input.signal,
        },
        addTrailEntry,
      )
    } catch (error) {
      if (this.input.signal?.aborted)
        throw new CompactionRefusal('cancelled', `compaction aborted: ${String(this.input.signal.reason)}`, {
          cause: error,
        })
      throw new CompactionRefusal(
        'commit',
        'a compaction/after listener failed, so the checkpoint was not committed: ' +
          `${(error as Error)?.message ?? String(error)}`,
        { cause: error },
      )
    }
    this.check(outcome)
    const carry = this.planCarry()
    const { shadowedSeqs, carriedSeqs } = carry
    const shadowedTokenCount = carry.shadowedTokens
    const sent = outcome.sent
    const checkpoint = this.checkpointOf(outcome)
    // Before the unit (it only reads): checked against everything the model reads after the fold.
    const audit = this.auditor?.audit(compactionId, outcome, this.projectedMessages(outcome), region.start, appended)
    let committed
    try {
      // One unit: a store writes the summary, its checkpoint and the hook's messages together or not at all.
      committed = session.unit(() => {
        const summary = session.append('compaction/summary', {
          compactionId,
          summary: [textBlock(outcome.text)],
          shadowedRange: { start: region.start, end: region.end },
          shadowedSeqs: [...shadowedSeqs],
          ...(carriedSeqs.length ? { carriedSeqs: [...carriedSeqs] } : {}),
          shadowedTokenCount,
          provider: sent.provider,
          model: sent.model,
          reasoningEffort: sent.reasoningEffort,
          temperature: sent.temperature,
          stop: sent.stop ? [...sent.stop] : undefined,
          maxTokens: sent.maxTokens,
          usage: outcome.result.usage,
          attempts: [...outcome.attempts],
        })
        const checkpointEvent = session.append(
          'user/message',
          { message: checkpoint },
          {
            op: 'replace',
            start: region.start,
            end: region.end,
            sourceEventSeqs: [...shadowedSeqs],
            ...(carriedSeqs.length ? { keep: [...carriedSeqs] } : {}),
          },
        )
        // After the checkpoint, in the same unit: the next request is built from the folded surface with them.
        const appendedSeqs = appended.map((message) => session.append('user/message', { message }, 'append').seq)
        if (audit) session.append('compaction/audit', audit)
        return { summary, checkpointEvent, appendedSeqs }
      })
    } catch (error) {
      throw new CompactionRefusal('commit', `checkpoint could not be committed: ${(error as Error).message}`, {
        cause: error,
      })
    }
    const { summary, checkpointEvent, appendedSeqs } = committed
    const timing = extras.timing?.({ checkpointSeq: checkpointEvent.seq })
    const end = session.append('compaction/end', { compactionId, turn, ...(timing ? { timing } : {}) })
    this.ended = true
    return Object.freeze({
      compactionId,
      startSeq: this.startSeq,
      summarySeq: summary.seq,
      checkpointSeq: checkpointEvent.seq,
      endSeq: end.seq,
      summary: Object.freeze([textBlock(outcome.text)]),
      shadowedRange: Object.freeze({ start: region.start, end: region.end }),
      shadowedSeqs: Object.freeze([...shadowedSeqs]),
      shadowedTokenCount,
      carriedSeqs: Object.freeze([...carriedSeqs]),
      appendedSeqs: Object.freeze(appendedSeqs),
    })
  }

  /**
   * Closes the bracket without a checkpoint: `compaction/end { error }` with every summary call
   * made (their cost stays on the log) and, for a background fold, why it was thrown away. A
   * no-op once the bracket is closed or the session is.
   */
  abandon(refusal: CompactionRefusal, extras: { discarded?: DiscardedFold; timing?: FoldTiming } = {}): void {
    if (this.ended || this.input.session.isClosed) return
    this.ended = true
    const made = refusal.attempts ?? this.summaryAttempts
    this.input.session.append('compaction/end', {
      compactionId: this.compactionId,
      turn: this.input.turn,
      error: refusal.message,
      ...(made?.length ? { attempts: [...made] } : {}),
      ...(extras.timing ? { timing: extras.timing } : {}),
      ...(extras.discarded ? { discarded: extras.discarded } : {}),
    })
  }

  /**
   * What committing `outcome` now would do to the request: the tokens the checkpoint shadows and
   * the checkpoint's own, as the token meter prices them.
   */
  figures(outcome: SummaryOutcome): { readonly shadowedTokens: number; readonly checkpointTokens: number } {
    return {
      shadowedTokens: this.planCarry().shadowedTokens,
      checkpointTokens: this.ctx.tokenMeter.estimateMessage(this.checkpointOf(outcome)),
    }
  }

  /**
   * The request's messages if `outcome` were committed now: the surface with the region replaced
   * by the checkpoint and the nodes it carries, and each message after the region at a position
   * of `rewrites` replaced by its rewrite (the tail prune that follows a swap). The
   * `compaction/after` hook's messages, queued at the commit, are not among them: they come
   * after everything here.
   */
  projectedMessages(outcome: SummaryOutcome, rewrites: ReadonlyMap<number, Message> = new Map()): Message[] {
    const { session, region } = this.input
    const messages = session.deriveMessages()
    const nodes = session.surface.nodes
    const carried = this.planCarry().carriedSeqs.map((seq) => messages[nodes.indexOf(seq)] as Message)
    const after = messages
      .slice(region.end + 1)
      .map((message, offset) => rewrites.get(region.end + 1 + offset) ?? message)
    return [...messages.slice(0, region.start), this.checkpointOf(outcome), ...carried, ...after]
  }

  /** Whether the bracket is closed (committed or abandoned). */
  get closed(): boolean {
    return this.ended
  }

  /**
   * Pins may change while the summary is written: the carry is planned again once the log has
   * grown. Everything the plan reads (surface, pins, the request header the prices follow) is
   * in the log, so while its length stays the same the plan does too; a commit asks for it
   * several times (checks, trail budget, projection), and planning walks the whole region.
   */
  private planCarry(): FoldCarry {
    const { session, region, keepUserMessages } = this.input
    if (this.plannedCarry?.logLength === session.length) return this.plannedCarry.carry
    const carry = planFoldCarry(
      session,
      region,
      (position) => this.ctx.tokenMeter.priceOf(session, session.surface.nodes[position] as number),
      keepUserMessages,
    )
    this.plannedCarry = { logLength: session.length, carry }
    return carry
  }

  private checkpointOf(outcome: SummaryOutcome): Message {
    const summary = this.auditor ? this.auditor.checkpointSummary(outcome.text) : outcome.text
    return createMessage({
      role: 'user',
      content: [textBlock(frameCheckpoint(summary))],
      source: checkpointSource(this.compactionId),
    })
  }
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
  options: { clock: EngineClock },
): Promise<CompactionResult> {
  const { clock } = options
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
    const refusal =
      error instanceof CompactionRefusal
        ? error
        : new CompactionRefusal('commit', `compaction failed: ${(error as Error)?.message ?? String(error)}`, {
            cause: error,
          })
    transaction.abandon(refusal)
    throw refusal
  }
}
