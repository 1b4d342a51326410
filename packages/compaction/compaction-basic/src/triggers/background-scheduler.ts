import type { AgentHandle, AgentStatus, ResumeContext } from '@warmfold/agent-loop'
import { AgentError } from '@warmfold/agent-loop'
import type { CompactionAgent, CompactionResult, DiscardedFold } from '@warmfold/compaction'
import { balancedCuts, checkpointCompactionId } from '@warmfold/compaction'
import type { Message } from '@warmfold/llm'
import type { AnySessionEvent, RequestHeader, Session } from '@warmfold/session'
import { headerEquals } from '@warmfold/session'
import type { ResolvedBackgroundFold } from '../config/background-fold-config.ts'
import { holdsHead, replayableRequest } from '../fold/replayable-request.ts'
import { BackgroundFold } from '../fold/background-fold.ts'
import { maxHeadTokens, prepareHead } from '../fold/compact-head.ts'
import { CompactionRefusal } from '../compaction-refusal.ts'
import type { EngineCore } from '../engine-core.ts'
import { waitOn } from '../engine-clock.ts'
import type { PlannedPrune } from '../engine-services.ts'
import { resolvePolicy } from '../config/compaction-policy.ts'
import type { SurfaceRegion } from '../fold/select-region.ts'
import { maximalHead, pricesWithin, selectHeadRegion } from '../fold/select-region.ts'
import { SessionCompactionState } from '../session-compaction-state.ts'
import { FoldPace, snapshotRetainTokens, softThreshold } from './fold-pace.ts'
import { learnSummaryLimit, summaryLimitFor } from '../fold/summary-limit-memory.ts'
import { summaryTarget } from '../fold/summary-request.ts'

/** How a background fold picks its head: like a pressure fold (retain the tail) or an idle fold (all it can). */
type HeadShape = 'retain' | 'maximal'

/**
 * The background folds of one engine (the *when* of `background` and of idle folds; the *how* is
 * the fold transaction):
 *
 * - **arm** at a request boundary once the request passed the soft threshold S and the last sent
 *   request's response has finished: open a bracket and summarize a head of exactly that request
 *   beside the conversation ({@link maybeArm}; the idle timer arms one with the largest head,
 *   {@link startIdle});
 * - **swap** at the next request boundary once the summary is in hand ({@link swapIfReady}), or at
 *   once when the agent is idle; validated first (route unchanged, region unchanged, not stale);
 * - **at H** wait for a fold in flight up to `maxWaitMs` ({@link atThreshold}), then let the
 *   pressure path fold on the turn's path;
 * - **cancel** on session close, a new agent on the session, a route or header change, a rewrite
 *   inside the snapshot, or a fold on the turn's path that must run first ({@link supersede}).
 *
 * One fold per session at a time; every discarded fold is logged with its calls (their cost).
 */
export class BackgroundFolds {
  /** Per session, the settle task of its latest fold (the summary call, then a swap while idle). */
  private readonly settling = new WeakMap<Session, Promise<void>>()
  /** Per session, how fast its request grows and how long its folds take (the adaptive S). */
  private readonly paces = new WeakMap<Session, FoldPace>()

  constructor(
    private readonly core: EngineCore,
    private readonly settings: ResolvedBackgroundFold,
  ) {
    const { ctx } = core
    // Now, not once the call settles: the store refuses appends as soon as it releases the session.
    ctx.on('session/close', (session: Session) => {
      SessionCompactionState.of(session).background?.discardNow(
        'closed',
        `session ${session.id} was closed before the fold was swapped in`,
      )
    })
    // A summary that arrived during the turn waits for the next request boundary; when the turn
    // ends first, it is swapped in as soon as the agent is idle.
    ctx.on('agent/status', (agent: AgentHandle, status: AgentStatus) => {
      const state = SessionCompactionState.of(agent.session)
      const fold = state.background
      if (status !== 'idle' || fold?.status !== 'ready' || fold.input.agent !== agent) return
      const before = this.settling.get(agent.session) ?? Promise.resolve()
      this.settling.set(
        agent.session,
        before.then(() => this.swapWhileIdle(fold, state, agent)),
      )
    })
    ctx.on('agent/resume', ({ agent }: ResumeContext) => {
      void SessionCompactionState.of(agent.session).background?.discard(
        'resumed',
        `a new agent took session ${agent.session.id} before the fold was swapped in`,
      )
    })
    ctx.on('session/event', (session: Session, event: AnySessionEvent) => this.watch(session, event))
  }

  /**
   * A request boundary of `session` with a request of `totalTokens` (the adaptive S learns the growth
   * rate from these).
   */
  boundary(session: Session, totalTokens: number): void {
    this.pace(session).boundary(this.core.clock.now(), totalTokens)
  }

  /** Arms a background fold of `agent`'s last sent request when the request is at or above S. */
  async maybeArm(
    agent: CompactionAgent,
    state: SessionCompactionState,
    header: RequestHeader,
    thresholdTokens: number,
    totalTokens: number,
  ): Promise<void> {
    if (!this.settings.enabled || totalTokens < this.softThreshold(agent.session, thresholdTokens)) return
    await this.start(agent, state, header, 'retain', 'background', { holdsLock: true })
  }

  /**
   * Arms the idle fold (the idle timer fired): the largest head of the last sent request, beside
   * whatever the user does next.
   */
  async startIdle(agent: CompactionAgent): Promise<void> {
    const header = agent.session.requestHeader()
    if (header)
      await this.start(agent, SessionCompactionState.of(agent.session), header, 'maximal', 'idle', { holdsLock: false })
  }

  /**
   * Swaps in a fold whose summary is in hand, at a request boundary; the caller holds the
   * session's compaction lock. `atThreshold`: the request reached the pressure threshold, so the
   * fold's timing records it as `ready` there.
   */
  async swapIfReady(state: SessionCompactionState, atThreshold = false): Promise<CompactionResult | null> {
    const fold = state.background
    if (fold?.status !== 'ready') return null
    if (atThreshold) fold.reachedThreshold()
    return this.swap(fold, state)
  }

  /**
   * The request reached the pressure threshold: wait for a fold in flight (up to `maxWaitMs`,
   * through the engine's clock), then swap it in if it is usable. A fold still running then is
   * discarded, so the pressure path can fold on the turn's path.
   */
  async atThreshold(state: SessionCompactionState): Promise<CompactionResult | null> {
    const fold = state.background
    if (!fold || fold.status === 'closed') return null
    fold.reachedThreshold()
    if (fold.status === 'pending') {
      const clock = this.core.clock
      const from = clock.now()
      const settled = await waitOn(clock, fold.settled, this.settings.maxWaitMs)
      fold.addWait(clock.now() - from)
      if (!settled) {
        await fold.discard(
          'timeout',
          'the request reached the pressure threshold and the summary was not in hand after background.maxWaitMs ' +
            `(${this.settings.maxWaitMs} ms)`,
        )
        return null
      }
    }
    return fold.status === 'ready' ? this.swap(fold, state) : null
  }

  /** Discards a fold in flight before a fold on the turn's path (overflow recovery, a manual compaction). */
  async supersede(state: SessionCompactionState, by: string): Promise<void> {
    await state.background?.discard('superseded', `${by} folded on the turn's path first`)
  }

  /** S for `session` (see `softThreshold`). */
  private softThreshold(session: Session, thresholdTokens: number): number {
    return softThreshold(thresholdTokens, this.settings.startRatio, this.pace(session).overlap())
  }

  private pace(session: Session): FoldPace {
    let pace = this.paces.get(session)
    if (!pace) this.paces.set(session, (pace = new FoldPace()))
    return pace
  }

  /** `holdsLock`: the caller is the request boundary, which holds the session's compaction lock (`busy`) itself. */
  private async start(
    agent: CompactionAgent,
    state: SessionCompactionState,
    header: RequestHeader,
    shape: HeadShape,
    trigger: 'background' | 'idle',
    { holdsLock }: { holdsLock: boolean },
  ): Promise<void> {
    const session = agent.session
    const last = replayableRequest(agent)
    if (
      state.background ||
      (state.busy && !holdsLock) ||
      state.backedOff('pressure') ||
      state.backedOff('background') ||
      session.isClosed
    )
      return
    // The fold replays the last answered request (its cache entry exists) while its bytes are
    // still the surface's first nodes.
    if (!last || !holdsHead(last, session, last.nodes.length - 1)) return
    const core = this.core
    const policy = resolvePolicy(core.config, header.config.provider, header.config.model)
    const route = await core.route(header, policy)
    const { budget } = await core.budgetFor(session, header)
    const snapshotNodes = last.nodes.length
    const retainTokens = snapshotRetainTokens(budget.retainTokens, this.pace(session).overlap())
    const choose = (prices: readonly number[], maxHead: number): SurfaceRegion | null => {
      const capped = pricesWithin(prices, snapshotNodes)
      return shape === 'maximal'
        ? maximalHead(session)(capped, maxHead)
        : selectHeadRegion(session, prices, retainTokens, { prices: capped, maxTokens: maxHead })
    }
    const input = {
      session,
      header,
      route,
      choose,
      trigger,
      turn: state.openTurn,
      stability: 'selected-span' as const,
      keepUserMessages: policy.keepUserMessages,
      buildRequest: core.buildSummaryRequest,
      answered: last,
    }
    const target = summaryTarget(header, route.policy)
    const limit = summaryLimitFor(session, target, route.limitTokens)
    const prepared = prepareHead(core.ctx, input, limit, maxHeadTokens(core.ctx, header, route, limit))
    if (prepared.kind !== 'ready') return
    const fold = new BackgroundFold(core.ctx, {
      agent,
      header,
      snapshotSeqs: last.nodes,
      clock: core.clock,
      transaction: {
        session,
        region: prepared.region,
        trigger,
        turn: state.openTurn,
        stability: 'selected-span',
        request: prepared.sized.request,
        budget: prepared.budget,
        keepUserMessages: policy.keepUserMessages,
        foldAudit: core.foldAudit,
      },
    })
    state.background = fold
    const { promptTokens, maxTokens } = prepared.sized
    const settled = fold.settled.then(() => {
      // Too long for the provider's tokenizer: the next fold (at the threshold, or the next background
      // one) asks for less.
      if (fold.refusal?.llmCode === 'CONTEXT_WINDOW_EXCEEDED')
        learnSummaryLimit(session, target, promptTokens, maxTokens)
      return this.settle(fold, state)
    })
    this.settling.set(session, settled)
  }

  /**
   * Resolves once the session's background fold has settled: its summary call is over and, if
   * the agent was idle, its swap (or discard) is done. A fold whose summary waits for the next
   * request boundary counts as settled.
   */
  async whenSettled(session: Session): Promise<void> {
    for (let seen: Promise<void> | undefined; this.settling.get(session) !== seen;) {
      seen = this.settling.get(session)
      await seen
    }
  }

  /** The summary is in hand (or the fold closed): an idle agent gets it swapped in now. */
  private async settle(fold: BackgroundFold, state: SessionCompactionState): Promise<void> {
    if (fold.status === 'closed') {
      if (state.background === fold) state.background = undefined
      this.backOffIfFailed(fold, state)
      await this.flush(fold.session)
      return
    }
    const agent = fold.input.agent as AgentHandle
    if (agent.status !== 'idle' || typeof agent.runMaintenance !== 'function') {
      // The summary is in hand while the conversation runs: the request after the swap (at the
      // next boundary) can read the post-swap prefix if it is written now, during the step.
      if (this.settings.prewarm && fold.outcome)
        this.prewarm(
          fold.session,
          fold.input.header,
          fold.transaction.projectedMessages(fold.outcome, this.tailRewrites(fold)),
        )
      return
    }
    await this.swapWhileIdle(fold, state, agent)
  }

  /**
   * Swaps a ready fold in while the agent is idle (its summary arrived between turns, or the turn
   * ended before the next request boundary), through the agent's maintenance lock; the user
   * coming back first leaves it for the next request boundary.
   */
  private async swapWhileIdle(fold: BackgroundFold, state: SessionCompactionState, agent: AgentHandle): Promise<void> {
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
  private async swap(fold: BackgroundFold, state: SessionCompactionState): Promise<CompactionResult | null> {
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
    const soft = this.softThreshold(session, budget.thresholdTokens)
    if (projected >= soft) {
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
      const refusal =
        error instanceof CompactionRefusal
          ? error
          : new CompactionRefusal('commit', (error as Error)?.message ?? String(error))
      await this.discard(fold, state, refusal.code === 'changed' ? 'region-changed' : 'refused', refusal.message)
      return null
    } finally {
      if (fold.status === 'closed' && state.background === fold) state.background = undefined
    }
    this.pruneTail(session, result)
    return result
  }

  private async discard(
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
  private backOffIfFailed(fold: BackgroundFold, state: SessionCompactionState): void {
    const reason = fold.discarded?.reason
    if (reason !== 'failed' && reason !== 'refused') return
    state.backOff('background')
  }

  /** The rewrites the tail prune after `fold`'s swap would land, by surface position now (see {@link pruneTail}). */
  private tailRewrites(fold: BackgroundFold): ReadonlyMap<number, Message> {
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
  private prewarm(session: Session, header: RequestHeader, messages: readonly Message[]): void {
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

  /**
   * Cancels the fold when the snapshot can no longer be swapped in: the header changed (route,
   * envelope, system prompt, tools), or a replace shadows a node of the snapshot (a prune, a
   * host's rewrite) other than this fold's own checkpoint.
   */
  private watch(session: Session, event: AnySessionEvent): void {
    if (event.type === 'compaction/end') {
      const { timing, error } = event.data as { timing?: { readyAfterMs: number }; error?: unknown }
      if (timing && error === undefined) this.pace(session).foldTook(timing.readyAfterMs)
      return
    }
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

  /** A swap or discard while no turn runs is flushed by nobody else. */
  private async flush(session: Session): Promise<void> {
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
}
