import { randomUUID } from 'node:crypto'
import type { Context } from '@cordisjs/core'
import type { CompactionResult, CompactionTrigger, SummaryAttempt } from '@warmfold/compaction'
import { checkpointSource } from '@warmfold/compaction'
import type { GenerateOptions } from '@warmfold/llm'
import { createMessage, textBlock } from '@warmfold/llm'
import type { Session } from '@warmfold/session'
import { frameCheckpoint } from './compaction-instruction.ts'
import { CompactionRefusal } from './compaction-refusal.ts'
import type { FoldCarry, KeepUserMessages } from './fold-carry.ts'
import { planFoldCarry } from './fold-carry.ts'
import { runCompactionAfter } from './run-compaction-after.ts'
import type { SurfaceRegion } from './select-region.ts'
import type { SummaryCallBudget } from './summary-attempts.ts'
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
   * `selected-span`: appends and rewrites after the span are tolerated (manual compaction).
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
}

/**
 * `compaction/start` (the lock) → summary call → `compaction/after` hook → stability re-check →
 * one unit of `compaction/summary`, the checkpoint `user/message` replacing the region
 * (immediately after its pricing event; it keeps the carried nodes, see `planFoldCarry`) and the
 * messages the hook queued (appended) → `compaction/end`. Any failure after the start ends the
 * bracket with `compaction/end { error }` and no checkpoint: the log stays valid and every
 * original stays on it.
 *
 * @throws CompactionRefusal (already logged) when no checkpoint was committed.
 */
export async function runTransaction(ctx: Context, input: TransactionInput): Promise<CompactionResult> {
  const { session, region, turn } = input
  const surface = session.surface
  const regionSeqs = surface.nodes.slice(region.start, region.end + 1)
  // Pins may change while the summary is written; the carry is planned again right before the commit.
  const planCarry = (): FoldCarry => planFoldCarry(session, region, (position) => ctx.tokenMeter.priceOf(session, session.surface.nodes[position] as number), input.keepUserMessages)
  const compactionId = randomUUID()
  const start = session.append('compaction/start', { compactionId, turn, trigger: input.trigger })
  // Every paid call goes on the log: on compaction/summary, or on compaction/end when refused.
  let attempts: readonly SummaryAttempt[] | undefined
  try {
    const outcome = await summarize(ctx, input.request, input.budget)
    attempts = outcome.attempts
    const checkpoint = createMessage({ role: 'user', content: [textBlock(frameCheckpoint(outcome.text))], source: checkpointSource(compactionId) })
    const checkpointTokens = ctx.tokenMeter.estimateMessage(checkpoint)
    assertCurrent(session, input, surface, regionSeqs)
    assertShrinks(checkpointTokens, planCarry())
    let appended
    try {
      appended = await runCompactionAfter(ctx, { session, compactionId, trigger: input.trigger, summary: outcome.text, carriedSeqs: planCarry().carriedSeqs, signal: input.signal })
    } catch (error) {
      if (input.signal?.aborted) throw new CompactionRefusal('cancelled', `compaction aborted: ${String(input.signal.reason)}`, { cause: error })
      throw new CompactionRefusal('commit', `a compaction/after listener failed, so the checkpoint was not committed: ${(error as Error)?.message ?? String(error)}`, { cause: error })
    }
    assertCurrent(session, input, surface, regionSeqs)
    const carry = planCarry()
    assertShrinks(checkpointTokens, carry)
    const { shadowedSeqs, carriedSeqs } = carry
    const shadowedTokenCount = carry.shadowedTokens
    const sent = outcome.sent
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
        const checkpointEvent = session.append('user/message', { message: checkpoint }, {
          op: 'replace',
          start: region.start,
          end: region.end,
          sourceEventSeqs: [...shadowedSeqs],
          ...(carriedSeqs.length ? { keep: [...carriedSeqs] } : {}),
        })
        // After the checkpoint, in the same unit: the next request is built from the folded surface with them.
        const appendedSeqs = appended.map((message) => session.append('user/message', { message }, 'append').seq)
        return { summary, checkpointEvent, appendedSeqs }
      })
    } catch (error) {
      throw new CompactionRefusal('commit', `checkpoint could not be committed: ${(error as Error).message}`, { cause: error })
    }
    const { summary, checkpointEvent, appendedSeqs } = committed
    const end = session.append('compaction/end', { compactionId, turn })
    return Object.freeze({
      compactionId,
      startSeq: start.seq,
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
  } catch (error) {
    const refusal = error instanceof CompactionRefusal ? error : new CompactionRefusal('commit', `compaction failed: ${(error as Error)?.message ?? String(error)}`, { cause: error })
    const made = refusal.attempts ?? attempts
    session.append('compaction/end', { compactionId, turn, error: refusal.message, ...(made?.length ? { attempts: [...made] } : {}) })
    throw refusal
  }
}

/** Refuses a checkpoint that is not smaller than what it shadows (carried nodes stay, so they do not count). */
function assertShrinks(checkpointTokens: number, carry: FoldCarry): void {
  if (!carry.foldsHistory) {
    throw new CompactionRefusal('summary', `every node of the region besides a leading checkpoint is pinned or kept (${carry.carriedSeqs.length} carried), so the checkpoint would fold nothing`)
  }
  if (checkpointTokens >= carry.shadowedTokens) {
    throw new CompactionRefusal('summary', `checkpoint (${checkpointTokens} tokens) is not smaller than what it replaces (${carry.shadowedTokens} tokens${carry.carriedSeqs.length ? `; ${carry.carriedTokens} tokens of pinned or kept messages stay` : ''})`)
  }
}

/** Refuses a cancelled compaction, or one whose region (or whole surface) changed meanwhile. */
function assertCurrent(session: Session, input: TransactionInput, before: Session['surface'], regionSeqs: readonly number[]): void {
  if (input.signal?.aborted) throw new CompactionRefusal('cancelled', `compaction aborted: ${String(input.signal.reason)}`)
  assertStable(session, input, before, regionSeqs)
}

function assertStable(session: Session, input: TransactionInput, before: Session['surface'], shadowedSeqs: readonly number[]): void {
  const now = session.surface
  const { start, end } = input.region
  const spanNow = now.nodes.slice(start, end + 1)
  const spanStable = spanNow.length === shadowedSeqs.length && spanNow.every((seq, index) => seq === shadowedSeqs[index])
  const wholeStable = now.replaceGeneration === before.replaceGeneration && now.nodes.length === before.nodes.length
  if (!spanStable || (input.stability === 'whole-surface' && !wholeStable)) {
    throw new CompactionRefusal('changed', `the session surface changed while summarizing (${input.stability === 'whole-surface' ? 'the whole surface must stay unchanged during an automatic compaction' : `positions ${start}..${end} no longer hold the summarized nodes`}); no checkpoint was committed`)
  }
}
