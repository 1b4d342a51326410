import type { AgentHandle } from '@warmfold/agent-loop'
import { AgentError } from '@warmfold/agent-loop'
import type { CompactionResult, DiscardedFold } from '@warmfold/compaction'
import { balancedCuts, checkpointCompactionId } from '@warmfold/compaction'
import type { Message } from '@warmfold/llm'
import type { AnySessionEvent, RequestHeader, Session } from '@warmfold/session'
import { headerEquals } from '@warmfold/session'
import type { ResolvedBackgroundFold } from '../config/background-fold-config.ts'
import { asRefusal } from '../compaction-refusal.ts'
import type { EngineCore } from '../engine-core.ts'
import type { PlannedPrune } from '../engine-services.ts'
import type { BackgroundFold } from '../fold/background-fold.ts'
import { SessionCompactionState } from '../session-compaction-state.ts'
import { StaleHistory } from './stale-history.ts'

/**
 * The swap of a background fold whose summary is in hand: validated (route and header unchanged,
 * not stale), committed, the retained tail pruned (rule C4), the post-swap prefix prewarmed; or
 * discarded with its reason, backing off after a failure. {@link BackgroundFolds} decides when.
 */
export class BackgroundSwap {
  constructor(
    private readonly core: EngineCore,
    private readonly settings: ResolvedBackgroundFold,
    /** S for a session at `thresholdTokens` (the scheduler's adaptive soft threshold). */
    private readonly soft: (session: Session, thresholdTokens: number) => number,
  ) {}

  /**
   * Swaps a ready fold in while the agent is idle (its summary arrived between turns, or the turn
   * ended before the next request boundary), through the agent's maintenance lock; the user
   * coming back first leaves it for the next request boundary.
   */
  async swapWhileIdle(fold: BackgroundFold, state: SessionCompactionState, agent: AgentHandle): Promise<void> {
    // The loop reports `idle` before its turn queue has wound down; maintenance runs after.
    await agent.whenIdle()
    try {
      await agent.runMaintenance(async () => {
        if (fold.status !== 'ready') return
        const release = state.lock()
        if (!release) return
        try {
          // Swapped while idle: the next request comes when the user does, and can read the prefix written now.
          if ((await this.swap(fold, state)) && this.settings.prewarm) {
            const header = fold.session.requestHeader()
            if (header) this.prewarm(fold.session, header, fold.session.deriveMessages())
          }
        } finally {
          release()
        }
      })
    } catch (error) {
      // The user came back first: the swap happens at the next request boundary instead.
      if (AgentError.isInstance(error) && error.code === 'BUSY') return
      this.core.ctx.emit(
        'internal/warning',
        `background fold of session ${fold.session.id}: the swap while idle failed: ` +
          `${(error as Error)?.message ?? String(error)}`,
      )
    }
    await this.flush(fold.session)
  }

  /**
   * Validates a ready fold and swaps it in: the route and header are those of the snapshot, the
   * request after the swap is below S (else the fold is stale: the conversation grew too far past
   * it), and the transaction's checks (region unchanged, checkpoint smaller). Then the tail prune
   * (rule C4) and, with `prewarm`, the post-swap prefix in the background.
   */
  async swap(fold: BackgroundFold, state: SessionCompactionState): Promise<CompactionResult | null> {
    const session = fold.session
    const outcome = fold.outcome
    if (!outcome) return null
    const header = session.requestHeader()
    if (!header || !headerEquals(header, fold.input.header)) {
      await this.discard(
        fold,
        state,
        'route-changed',
        'the request header (provider, model, envelope, system prompt or tools) changed since the snapshot',
      )
      return null
    }
    const core = this.core
    const { budget } = await core.budgetFor(session, header)
    const meter = core.meter()
    const total = meter.measure(session).totalTokens
    const { shadowedTokens, checkpointTokens } = fold.transaction.figures(outcome)
    const projected = total - shadowedTokens + checkpointTokens
    const soft = this.soft(session, budget.thresholdTokens)
    if (projected >= soft) {
      StaleHistory.of(session).stale(projected)
      await this.discard(
        fold,
        state,
        'stale',
        `the request after the swap would be about ${projected} tokens, at or above the soft threshold (${soft}): ` +
          'the conversation grew too far past the snapshot, so a fresh fold of the last request folds more',
      )
      return null
    }
    let result: CompactionResult
    try {
      result = await fold.commit(() => meter.measure(session).surfaceTokens)
    } catch (error) {
      const refusal = asRefusal(error, 'commit')
      await this.discard(fold, state, refusal.code === 'changed' ? 'region-changed' : 'refused', refusal.message)
      return null
    } finally {
      if (fold.status === 'closed' && state.background === fold) state.background = undefined
    }
    this.pruneTail(session, result)
    return result
  }

  async discard(
    fold: BackgroundFold,
    state: SessionCompactionState,
    reason: DiscardedFold['reason'],
    detail: string,
  ): Promise<void> {
    await fold.discard(reason, detail)
    if (state.background === fold) state.background = undefined
    this.backOffIfFailed(fold, state)
  }

  /** A failed or refused fold would fail again at the next boundary: no new one until a new user turn or a shrink. */
  backOffIfFailed(fold: BackgroundFold, state: SessionCompactionState): void {
    const reason = fold.discarded?.reason
    if (reason === 'failed' || reason === 'refused') state.backOff('background')
  }

  /** The rewrites the tail prune after `fold`'s swap would land, by surface position now (see {@link pruneTail}). */
  tailRewrites(fold: BackgroundFold): ReadonlyMap<number, Message> {
    const pruner = this.core.pruner()
    const end = fold.input.transaction.region.end
    const rewrites = new Map<number, Message>()
    for (const entry of pruner?.planSession(fold.session) ?? [])
      if (entry.position > end && entry.replacement) rewrites.set(entry.position, entry.replacement)
    return rewrites
  }

  /**
   * After the swap, the retained tail is prefilled again anyway: its oversized results are pruned for
   * free (rule C4).
   */
  private pruneTail(session: Session, result: CompactionResult): void {
    const pruner = this.core.pruner()
    if (!pruner) return
    const region = {
      start: result.shadowedRange.start,
      end: result.shadowedRange.start + (result.carriedSeqs?.length ?? 0),
    }
    const plan: readonly PlannedPrune[] = pruner.planSession(session).filter((entry) => entry.position > region.end)
    if (plan.length) this.core.landPrunePlan(session, pruner, plan, region)
  }

  /**
   * Writes the post-swap prefix to the provider's cache before the conversation needs it: one
   * request of `messages` (the longest prefix of them that ends at a balanced cut with a user or
   * tool message, so a tool call still running is left out) with the smallest output cap its
   * effort allows. Fire and forget: a failure only costs the next request its prefill.
   */
  prewarm(session: Session, header: RequestHeader, messages: readonly Message[]): void {
    const { ctx } = this.core
    const cuts = balancedCuts(messages)
    let end = messages.length
    while (end > 0 && (!cuts[end] || messages[end - 1]?.role === 'assistant')) end--
    if (end === 0) return
    void (async () => {
      const info = await ctx.llm.resolveModelInfo(header.config.provider, header.config.model)
      const effort = header.config.reasoningEffort ?? info.reasoning?.defaultEffort
      const reserve = effort === undefined ? 0 : (info.reasoning?.outputReserveTokens?.[effort] ?? 0)
      await ctx.llm.generate({
        ...header.config,
        system: header.system,
        tools: header.tools,
        messages: messages.slice(0, end),
        maxTokens: reserve + 1,
        purpose: 'prewarm',
        sessionId: session.id,
      })
    })().catch((error: unknown) =>
      ctx.emit(
        'internal/warning',
        `background fold of session ${session.id}: the prewarm request failed: ` +
          `${(error as Error)?.message ?? String(error)}`,
      ),
    )
  }

  /** A swap or discard while no turn runs is flushed by nobody else. */
  async flush(session: Session): Promise<void> {
    if (session.isClosed) return
    try {
      await this.core.ctx.sessions.flush(session)
    } catch (error) {
      this.core.ctx.emit(
        'internal/warning',
        `background fold of session ${session.id}: flushing the session failed: ` +
          `${(error as Error)?.message ?? String(error)}`,
      )
    }
  }

  /**
   * Cancels the fold when the snapshot can no longer be swapped in: the header changed (route,
   * envelope, system prompt, tools), or a replace shadows a node of the snapshot (a prune, a
   * host's rewrite) other than this fold's own checkpoint.
   */
  watch(session: Session, event: AnySessionEvent): void {
    const state = SessionCompactionState.of(session)
    const fold = state.background
    if (!fold || fold.status === 'closed') return
    let reason: ['route-changed' | 'region-changed', string] | undefined
    if (event.type === 'request/header') {
      const header = (event.data as { header: RequestHeader }).header
      if (!headerEquals(header, fold.input.header))
        reason = [
          'route-changed',
          `a request/header at seq ${event.seq} changed the route or envelope since the snapshot`,
        ]
    } else if (event.surface?.op === 'replace') {
      const message = (event.data as { message?: Message }).message
      // Our own commit's checkpoint replaces the region: not a rewrite to cancel for.
      if (message && checkpointCompactionId(message) === fold.compactionId) return
      const shadowed = event.surface.sourceEventSeqs.filter((seq) => fold.snapshotSeqs.has(seq))
      if (shadowed.length)
        reason = [
          'region-changed',
          `a ${event.type} at seq ${event.seq} rewrote seq ${shadowed.join(', ')} of the snapshot`,
        ]
    }
    // Not from inside the session's own event delivery: the discard appends to the session.
    if (reason) queueMicrotask(() => void this.discard(fold, state, reason[0], reason[1]))
  }
}
