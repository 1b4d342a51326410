import type { AgentHandle, AgentStatus, ResumeContext } from '@warmfold/agent-loop'
import type { CompactionAgent, CompactionResult } from '@warmfold/compaction'
import type { AnySessionEvent, RequestHeader, Session } from '@warmfold/session'
import type { ResolvedBackgroundFold } from '../config/background-fold-config.ts'
import { holdsHead, replayableRequest } from '../fold/replayable-request.ts'
import { BackgroundFold } from '../fold/background-fold.ts'
import { prepareHead } from '../fold/compact-head.ts'
import { maxHeadTokens } from '../fold/summary-route.ts'
import type { EngineCore } from '../engine-core.ts'
import { waitOn } from '../engine-clock.ts'
import { keptUserBudget } from '../config/keep-user-messages.ts'
import type { SurfaceRegion } from '../fold/select-region.ts'
import { maximalHead, pricesWithin, selectHeadRegion } from '../fold/select-region.ts'
import { SessionCompactionState } from '../session-compaction-state.ts'
import { BackgroundSwap } from './background-swap.ts'
import { FoldsInFlight } from './folds-in-flight.ts'
import { FoldPace, snapshotRetainTokens, softThreshold } from './fold-pace.ts'
import { backgroundForecast } from './fold-forecast.ts'
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
  private readonly swaps: BackgroundSwap
  private readonly inFlight = new FoldsInFlight()

  constructor(
    private readonly core: EngineCore,
    private readonly settings: ResolvedBackgroundFold,
  ) {
    this.swaps = new BackgroundSwap(core, settings, (session, thresholdTokens) =>
      this.softThreshold(session, thresholdTokens),
    )
    const { ctx } = core
    // Now, not once the call settles: the store refuses appends as soon as it releases the session.
    // Prepended, so the call is aborted before other listeners (the cache ledger logs it then).
    ctx.on(
      'session/close',
      (session: Session) =>
        SessionCompactionState.of(session).background?.discardNow(
          'closed',
          `session ${session.id} was closed before the fold was swapped in`,
        ),
      { prepend: true },
    )
    // A summary that arrived during the turn waits for the next request boundary; when the turn
    // ends first, it is swapped in as soon as the agent is idle.
    ctx.on('agent/status', (agent: AgentHandle, status: AgentStatus) => {
      const state = SessionCompactionState.of(agent.session)
      const fold = state.background
      if (status !== 'idle' || fold?.status !== 'ready' || fold.input.agent !== agent) return
      const before = this.settling.get(agent.session) ?? Promise.resolve()
      this.settling.set(
        agent.session,
        before.then(() => this.swaps.swapWhileIdle(fold, state, agent)),
      )
    })
    ctx.on('agent/resume', ({ agent }: ResumeContext) => {
      void SessionCompactionState.of(agent.session).background?.discard(
        'resumed',
        `a new agent took session ${agent.session.id} before the fold was swapped in`,
      )
    })
    ctx.on('session/event', (session: Session, event: AnySessionEvent) => {
      if (event.type !== 'compaction/end') return this.swaps.watch(session, event)
      const { timing, error } = event.data as { timing?: { readyAfterMs: number }; error?: unknown }
      if (timing && error === undefined) this.pace(session).foldTook(timing.readyAfterMs)
    })
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
    return this.swaps.swap(fold, state)
  }

  /**
   * The request reached the pressure threshold: wait for a fold in flight (up to `maxWaitMs`,
   * through the engine's clock), then swap it in if it is usable. A fold still running then is
   * discarded, so the pressure path can fold on the turn's path. `signal` (the turn's, joined to
   * the engine's unload) ends the wait at once: the fold is left to land (see `FoldsInFlight`).
   */
  async atThreshold(state: SessionCompactionState, signal?: AbortSignal): Promise<CompactionResult | null> {
    const fold = state.background
    if (!fold || fold.status === 'closed') return null
    fold.reachedThreshold()
    if (fold.status === 'pending') {
      const clock = this.core.clock
      const from = clock.now()
      const settled = await waitOn(clock, fold.settled, this.settings.maxWaitMs, signal)
      fold.addWait(clock.now() - from)
      if (signal?.aborted) return null
      if (!settled) {
        await fold.discard(
          'timeout',
          'the request reached the pressure threshold and the summary was not in hand after background.maxWaitMs ' +
            `(${this.settings.maxWaitMs} ms)`,
        )
        return null
      }
    }
    return fold.status === 'ready' ? this.swaps.swap(fold, state) : null
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
    if (!state.mayStartBackground(holdsLock)) return
    // The fold replays the last answered request (its cache entry exists) while its bytes are
    // still the surface's first nodes.
    if (!last || !holdsHead(last, session, last.nodes.length - 1)) return
    const core = this.core
    const { policy, budget } = await core.budgetFor(session, header)
    const route = await core.route(header, policy)
    const keepUserMessages = keptUserBudget(policy.keepUserMessages, budget.contextWindow)
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
      keepUserMessages,
      foldAudit: core.foldAudit,
      buildRequest: core.buildSummaryRequest,
      answered: last,
    }
    const target = summaryTarget(header, route.policy)
    const limit = summaryLimitFor(session, target, route.limitTokens)
    const prepared = prepareHead(core.ctx, input, limit, maxHeadTokens(core.ctx, header, route, limit))
    if (prepared.kind !== 'ready' || this.inFlight.unloaded) return
    const pace = this.pace(session)
    const forecast = backgroundForecast(core.ctx, { ...this.settings, session, prepared, budget, trigger, pace })
    if (!forecast.start) return
    const fold = new BackgroundFold(core.ctx, {
      agent,
      header,
      snapshotSeqs: last.nodes,
      clock: core.clock,
      // The head's settings go on to the transaction, as a sync fold's do (see `compactHead`).
      transaction: { ...input, region: prepared.region, request: prepared.sized.request, budget: prepared.budget },
    })
    state.background = fold
    this.inFlight.add(fold)
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

  /** The engine is unloading: see {@link FoldsInFlight.unload}. */
  unload(): void {
    this.inFlight.unload((session) => void this.swaps.flush(session))
  }

  /** The summary is in hand (or the fold closed): an idle agent gets it swapped in now. */
  private async settle(fold: BackgroundFold, state: SessionCompactionState): Promise<void> {
    if (this.inFlight.unloaded) return // discarded by the unload; the engine's services may be gone
    if (fold.status === 'closed') {
      if (state.background === fold) state.background = undefined
      this.swaps.backOffIfFailed(fold, state)
      await this.swaps.flush(fold.session)
      return
    }
    const agent = fold.input.agent as AgentHandle
    if (agent.status !== 'idle' || typeof agent.runMaintenance !== 'function') {
      // The summary is in hand while the conversation runs: the request after the swap (at the
      // next boundary) can read the post-swap prefix if it is written now, during the step.
      if (this.settings.prewarm && fold.outcome)
        this.swaps.prewarm(
          fold.session,
          fold.input.header,
          fold.transaction.projectedMessages(fold.outcome, this.swaps.tailRewrites(fold)),
        )
      return
    }
    await this.swaps.swapWhileIdle(fold, state, agent)
  }
}
