import type { Context } from '@cordisjs/core'
import type { RequestHookContext, ResumeContext } from '@warmfold/agent-loop'
import { requireServices } from '@warmfold/agent-loop'
import type { CompactionAgent, CompactionResult, CompactionTrigger, ManualCompactionAgent } from '@warmfold/compaction'
import { CompactionEngine, ManualCompactionError } from '@warmfold/compaction'
import type { ConfigParser, GenerateOptions, Parsed, WarmfoldPluginInfo } from '@warmfold/llm'
import { WARMFOLD_PLUGIN } from '@warmfold/llm'
import type { Session } from '@warmfold/session'
import type { TokenMeter } from '@warmfold/token-meter'
import { resolveBackgroundFold } from './config/background-fold-config.ts'
import { BackgroundFolds } from './triggers/background-scheduler.ts'
import { compactHead } from './fold/compact-head.ts'
import { resolveSummaryRoute } from './fold/summary-route.ts'
import type { BasicCompactionConfig } from './config/compaction-policy.ts'
import { parseCompactionConfig, resolvePolicy } from './config/compaction-policy.ts'
import { resolveBudget } from './config/compaction-budget.ts'
import { keptUserBudget } from './config/keep-user-messages.ts'
import type { EngineClock } from './engine-clock.ts'
import { replayableRequest } from './fold/replayable-request.ts'
import { installArtifactReadAhead } from './fold/artifact-read-ahead.ts'
import type { EngineCore } from './engine-core.ts'
import type { PlannedPrune, PrunerSeam } from './engine-services.ts'
import { ENGINE_REQUIRED_SERVICES, TOKEN_METER_SERVICE } from './engine-services.ts'
import { resolveFoldAudit } from './config/fold-audit-config.ts'
import { foldWhileWarm } from './triggers/idle-fold.ts'
import { installIdleCompaction } from './triggers/idle-timer.ts'
import { resolveIdleCompaction } from './config/idle-compaction-config.ts'
import { compactManually, compactSpan } from './triggers/manual-compaction.ts'
import { recoverOverflow } from './triggers/overflow-trigger.ts'
import { atRequestBoundary } from './triggers/request-boundary.ts'
import type { SurfaceRegion } from './fold/select-region.ts'
import { SessionCompactionState } from './session-compaction-state.ts'
import type { SummaryRequestInput } from './fold/summary-request.ts'
import { buildSummaryRequest } from './fold/summary-request.ts'

/**
 * The cache-warm compaction engine (`ctx.compaction`). Its summary call replays the routed
 * envelope (C2) and the routed messages of the region plus one instruction (C3); its prune pass
 * rewrites only the retained tail when a summary follows (C4); every rewrite is priced and
 * logged (C5).
 *
 * *When* to fold is `triggers/`, *how* is `fold/` (the README's source layout maps both); this
 * class wires them to the agent loop and hands each the session's `SessionCompactionState`.
 *
 * Subclasses may override the protected seams {@link buildSummaryRequest} and
 * {@link landPrunePlan} (the test kit's reference strategies do); the engine has no switch
 * that turns its cache rules off.
 */
export class BasicCompactionEngine extends CompactionEngine<BasicCompactionEngine.Config> {
  static readonly [WARMFOLD_PLUGIN]: WarmfoldPluginInfo = {
    packageName: '@warmfold/compaction-basic',
    provides: 'ctx.compaction',
  }
  // All optional for cordis: a required inject that is missing keeps the plugin pending without
  // a word (a host that forgot the token meter got no compaction and no warning). Each entry
  // point checks the needed ones instead and throws a MissingServiceError naming the package.
  static inject = {
    llm: { required: false },
    tokenMeter: { required: false },
    sessions: { required: false },
    toolResultPruner: { required: false },
  }

  /** The engine's own context: methods called through `ctx.compaction` must not use the caller's. */
  protected readonly owner: Context
  private readonly core: EngineCore
  /** The background folds, when `background.enabled` and `auto` allow them. */
  private readonly background?: BackgroundFolds
  /** Aborted when the engine unloads: every wait and summary call of the engine ends with it. */
  private readonly lifetime = new AbortController()

  constructor(ctx: Context, config: Parsed<BasicCompactionEngine.Config>) {
    super(ctx, config)
    this.owner = ctx
    const idle = resolveIdleCompaction(config.idle)
    const clock: EngineClock = config.clock ?? idle.clock
    const foldAudit = resolveFoldAudit(config.audit, config.artifactTrail)
    if (foldAudit.audit.enabled || foldAudit.trail.enabled) installArtifactReadAhead(ctx, foldAudit.extractor)
    this.core = {
      ctx,
      config,
      clock,
      foldAudit,
      meter: () => this.meter,
      pruner: () => this.pruner,
      budgetFor: async (session, header) => {
        const { provider, model } = header.config
        const policy = resolvePolicy(config, provider, model)
        const info = await ctx.llm.resolveModelInfo(provider, model)
        const reserved = header.config.maxTokens ?? info.defaultMaxTokens ?? 0
        const target = `${provider}/${model} (session ${session.id})`
        return { policy, budget: resolveBudget(policy, info.contextWindow, reserved, target), info }
      },
      route: (header, routed) =>
        resolveSummaryRoute(
          ctx,
          config,
          header,
          routed ?? resolvePolicy(config, header.config.provider, header.config.model),
        ),
      compactHead: async (agent, header, route, choose, rest) => {
        // Which user messages survive is the conversation's policy (and window), not the summary target's.
        const { provider, model } = header.config
        const policy = resolvePolicy(this.config, provider, model).keepUserMessages
        const keepUserMessages =
          policy && keptUserBudget(policy, (await this.owner.llm.resolveModelInfo(provider, model)).contextWindow)
        return compactHead(this.owner, {
          session: agent.session,
          header,
          route,
          choose,
          ...rest,
          keepUserMessages,
          foldAudit,
          buildRequest: (input) => this.buildSummaryRequest(input),
          clock,
          answered: replayableRequest(agent),
        })
      },
      buildSummaryRequest: (input) => this.buildSummaryRequest(input),
      landPrunePlan: (session, pruner, plan, region) => this.landPrunePlan(session, pruner, plan, region),
    }
    // The provider's TTL runs from each conversation request: the prune decision asks whether it is still warm.
    ctx.on('agent/request', ({ agent }: RequestHookContext) => {
      SessionCompactionState.of(agent.session).lastRequestAt = clock.now()
    })
    // A bracket a crash left open is closed before the loop closes the turn it belonged to.
    ctx.on('agent/resume', ({ agent }: ResumeContext) => {
      const state = SessionCompactionState.of(agent.session)
      if (!state.busy) state.closeOpenCompaction()
    })
    const automatic = config.auto !== false
    const background = resolveBackgroundFold(config.background)
    // Idle folds run on the background machinery, so they exist when either is on.
    if (automatic && (background.enabled || idle.enabled)) this.background = new BackgroundFolds(this.core, background)
    // The `CompactionEngine` base wires pressure and overflow triggers unless `auto` is false.
    if (idle.enabled && automatic) {
      installIdleCompaction(
        ctx,
        {
          startIdleFold: async (agent) => this.background?.startIdle(agent),
          idleTarget: async (session, header) => {
            const { budget, info } = await this.core.budgetFor(session, header)
            return { thresholdTokens: budget.thresholdTokens, ttlMs: info.cacheTtlMs }
          },
          requestTokens: (session) => this.meter.measure(session).totalTokens,
        },
        { ...idle, clock },
      )
    }
  }

  /** @throws MissingServiceError when the token meter, the runtime or the session store is not mounted. */
  async compactIfNeeded(
    agent: CompactionAgent,
    trigger: CompactionTrigger,
    signal?: AbortSignal,
  ): Promise<CompactionResult | null> {
    this.requireServices()
    const session = agent.session
    const header = session.requestHeader()
    if (!header || signal?.aborted) return null
    const state = SessionCompactionState.of(session)
    const release = state.lock()
    if (!release) return null
    const whileLoaded = this.whileLoaded(signal)
    try {
      state.closeOpenCompaction()
      if (trigger === 'idle') return await foldWhileWarm(this.core, agent, header, whileLoaded)
      if (trigger === 'context-overflow') {
        await this.background?.supersede(state, 'overflow recovery')
        return await recoverOverflow(this.core, agent, state, header, whileLoaded)
      }
      return await atRequestBoundary(this.core, this.background, agent, state, header, whileLoaded)
    } finally {
      release()
    }
  }

  async compactNow(agent: ManualCompactionAgent, signal?: AbortSignal): Promise<CompactionResult | null> {
    this.requireServices()
    if (signal?.aborted)
      throw new ManualCompactionError(
        'cancelled',
        `manual compaction cancelled before it started: ${String(signal.reason)}`,
      )
    const state = SessionCompactionState.of(agent.session)
    try {
      await this.background?.supersede(state, 'a manual compaction')
      // A summary swapped in while idle holds the agent's maintenance lock for its swap: the
      // manual fold runs after it, on the history it left, instead of failing busy.
      await this.background?.whenSettled(agent.session)
      return await agent.runMaintenance((agentSignal) =>
        compactManually(this.core, agent, state, this.whileLoaded(signal, agentSignal)),
      )
    } catch (error) {
      if (ManualCompactionError.isInstance(error)) throw error
      if ((error as { code?: unknown })?.code === 'BUSY')
        throw new ManualCompactionError('busy', (error as Error).message, { cause: error })
      throw error
    }
  }

  async compactRegion(
    start: number,
    end: number,
    agent: CompactionAgent,
    signal?: AbortSignal,
  ): Promise<CompactionResult> {
    this.requireServices()
    const state = SessionCompactionState.of(agent.session)
    await this.background?.supersede(state, 'compactRegion')
    return compactSpan(this.core, agent, state, start, end, this.whileLoaded(signal))
  }

  /**
   * Resolves once `session`'s background fold (from the soft threshold, or the idle timer) has
   * settled: its summary call is over and, while the agent was idle, the summary is swapped in
   * (or discarded, logged). A summary that waits for the next request boundary counts as
   * settled. Resolves at once without one. For hosts and tests that must not race a fold.
   */
  whenFoldsSettle(session: Session): Promise<void> {
    return this.background?.whenSettled(session) ?? Promise.resolve()
  }

  /**
   * Unloading the engine (its plugin disposed, or its context stopped) ends its work: background
   * folds in flight are discarded (`unloaded`: call aborted, bracket closed, nothing committed),
   * and every wait and summary call on a turn's path or of a manual compaction is aborted.
   */
  protected override stop(): void {
    this.lifetime.abort(new Error('the compaction engine was unloaded'))
    this.background?.unload()
  }

  /** `signals` joined to the engine's lifetime: aborted by any of them, or when the engine unloads. */
  private whileLoaded(...signals: Array<AbortSignal | undefined>): AbortSignal {
    const given = signals.filter((signal): signal is AbortSignal => signal !== undefined)
    return given.length ? AbortSignal.any([...given, this.lifetime.signal]) : this.lifetime.signal
  }

  /**
   * Builds the summary request. The default keeps rules C2 and C3 (see `buildSummaryRequest`);
   * a subclass may override it to model another design for comparison.
   */
  protected buildSummaryRequest(input: SummaryRequestInput): GenerateOptions {
    return buildSummaryRequest(input)
  }

  /**
   * Lands the prune plan when a summary of `region` follows. The default rewrites only nodes
   * after the region (the retained tail, which is prefilled again after the checkpoint anyway),
   * so the summary call replays the region byte for byte (rule C4).
   */
  protected landPrunePlan(
    session: Session,
    pruner: PrunerSeam,
    plan: readonly PlannedPrune[],
    region: SurfaceRegion,
  ): void {
    const tail = new Set(plan.filter((entry) => entry.position > region.end).map((entry) => entry.seq))
    if (tail.size) pruner.pruneSession(session, (seq) => tail.has(seq))
  }

  /** The routed policy's `maxOverflowRetries`; 0 before the session has a header (no route yet). */
  protected override maxOverflowRetries(agent: CompactionAgent): number {
    const header = agent.session.requestHeader()
    if (!header) return 0
    return resolvePolicy(this.config, header.config.provider, header.config.model).maxOverflowRetries
  }

  protected override surfaceSize(session: Session): number {
    return this.meter.measure(session).surfaceTokens
  }

  private requireServices(): void {
    requireServices(this.owner, 'BasicCompactionEngine', ENGINE_REQUIRED_SERVICES)
  }

  private get meter(): TokenMeter {
    requireServices(this.owner, 'BasicCompactionEngine', [TOKEN_METER_SERVICE])
    return this.owner.tokenMeter
  }

  private get pruner(): PrunerSeam | undefined {
    return (this.owner as unknown as { toolResultPruner?: PrunerSeam }).toolResultPruner
  }
}

export namespace BasicCompactionEngine {
  export type Config = ReturnType<typeof parseCompactionConfig>
  export const Config: ConfigParser<Config, BasicCompactionConfig> = parseCompactionConfig
}

export type { BasicCompactionConfig }
