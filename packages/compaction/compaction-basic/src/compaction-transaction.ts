import { randomUUID } from 'node:crypto'
import type { Context } from '@cordisjs/core'
import type { CompactionResult, SummaryAttempt } from '@warmfold/compaction'
import { checkpointSource } from '@warmfold/compaction'
import type { GenerateOptions } from '@warmfold/llm'
import { createMessage, textBlock } from '@warmfold/llm'
import type { Session } from '@warmfold/session'
import { frameCheckpoint } from './compaction-instruction.ts'
import { CompactionRefusal } from './compaction-refusal.ts'
import type { SurfaceRegion } from './select-region.ts'
import type { SummaryCallBudget } from './summary-attempts.ts'
import { summarize } from './summarize.ts'

/** One compaction of a selected region. */
export interface TransactionInput {
  readonly session: Session
  readonly region: SurfaceRegion
  readonly trigger: 'pressure' | 'context-overflow' | 'manual'
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
}

/**
 * `compaction/start` (the lock) → summary call → stability re-check → `compaction/summary` →
 * checkpoint `user/message` replacing the region (immediately after its pricing event) →
 * `compaction/end`. Any failure after the start ends the bracket with `compaction/end { error }`
 * and no checkpoint: the log stays valid and every original stays on it.
 *
 * @throws CompactionRefusal (already logged) when no checkpoint was committed.
 */
export async function runTransaction(ctx: Context, input: TransactionInput): Promise<CompactionResult> {
  const { session, region, turn } = input
  const surface = session.surface
  const shadowedSeqs = surface.nodes.slice(region.start, region.end + 1)
  const shadowedTokenCount = shadowedSeqs.reduce((sum, seq) => sum + ctx.tokenMeter.priceOf(session, seq), 0)
  const compactionId = randomUUID()
  const start = session.append('compaction/start', { compactionId, turn, trigger: input.trigger })
  // Every paid call goes on the log: on compaction/summary, or on compaction/end when refused.
  let attempts: readonly SummaryAttempt[] | undefined
  try {
    const outcome = await summarize(ctx, input.request, input.budget)
    attempts = outcome.attempts
    const checkpoint = createMessage({ role: 'user', content: [textBlock(frameCheckpoint(outcome.text))], source: checkpointSource(compactionId) })
    const checkpointTokens = ctx.tokenMeter.estimateMessage(checkpoint)
    if (checkpointTokens >= shadowedTokenCount) {
      throw new CompactionRefusal('summary', `checkpoint (${checkpointTokens} tokens) is not smaller than what it replaces (${shadowedTokenCount} tokens)`)
    }
    if (input.signal?.aborted) throw new CompactionRefusal('cancelled', `compaction aborted: ${String(input.signal.reason)}`)
    assertStable(session, input, surface, shadowedSeqs)
    const sent = outcome.sent
    let committed
    try {
      // One unit: a store writes the summary and its checkpoint together or not at all.
      committed = session.unit(() => {
        const summary = session.append('compaction/summary', {
          compactionId,
          summary: [textBlock(outcome.text)],
          shadowedRange: { start: region.start, end: region.end },
          shadowedSeqs: [...shadowedSeqs],
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
        const checkpointEvent = session.append('user/message', { message: checkpoint }, { op: 'replace', start: region.start, end: region.end, sourceEventSeqs: [...shadowedSeqs] })
        return { summary, checkpointEvent }
      })
    } catch (error) {
      throw new CompactionRefusal('commit', `checkpoint could not be committed: ${(error as Error).message}`, { cause: error })
    }
    const { summary, checkpointEvent } = committed
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
    })
  } catch (error) {
    const refusal = error instanceof CompactionRefusal ? error : new CompactionRefusal('commit', `compaction failed: ${(error as Error)?.message ?? String(error)}`, { cause: error })
    const made = refusal.attempts ?? attempts
    session.append('compaction/end', { compactionId, turn, error: refusal.message, ...(made?.length ? { attempts: [...made] } : {}) })
    throw refusal
  }
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
