import { randomUUID } from 'node:crypto'
import type { Context } from '@cordisjs/core'
import type { CompactionResult, DiscardedFold, FoldTiming, SummaryAttempt } from '@warmfold/compaction'
import { checkpointSource } from '@warmfold/compaction'
import type { Message } from '@warmfold/llm'
import { createMessage, textBlock } from '@warmfold/llm'
import type { Session } from '@warmfold/session'
import { frameCheckpoint } from './compaction-instruction.ts'
import { CompactionRefusal } from '../compaction-refusal.ts'
import type { FoldCarry } from './fold-carry.ts'
import { planFoldCarry } from './fold-carry.ts'
import { FoldAuditor } from './fold-auditor.ts'
import { assertCurrent, assertShrinks } from './fold-checks.ts'
import { runCompactionAfter } from './run-compaction-after.ts'
import type { SummaryOutcome } from './summarize.ts'
import { summarize } from './summarize.ts'
import type { CommitExtras, TransactionInput } from './transaction-input.ts'

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
  private readonly surfaceAtOpen: Session['surface']
  /** The region's seqs when the bracket opened: what the checkpoint must replace. */
  readonly regionSeqs: readonly number[]
  /**
   * Every summary call made so far, a call in flight as `aborted`: on `compaction/summary`, or on
   * `compaction/end` when refused.
   */
  private readonly attempts: SummaryAttempt[] = []
  private ended = false
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
    const { shadowedSeqs, carriedSeqs, shadowedTokens: shadowedTokenCount } = this.planCarry()
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
    const made = refusal.attempts ?? this.attempts
    this.input.session.append('compaction/end', {
      compactionId: this.compactionId,
      turn: this.input.turn,
      error: refusal.message,
      ...(made.length ? { attempts: [...made] } : {}),
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
