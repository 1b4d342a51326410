import type { Context } from '@cordisjs/core'
import type { RequestHookContext, ResumeContext } from '@warmfold/agent-loop'
import { requireServices } from '@warmfold/agent-loop'
import type { CompactionAgent, CompactionResult, CompactionTrigger, ManualCompactionAgent, PruneDecisionData } from '@warmfold/compaction'
import { balancedCuts, CompactionEngine, ManualCompactionError } from '@warmfold/compaction'
import type { ConfigParser, GenerateOptions, ModelInfo, Parsed, WarmfoldPluginInfo } from '@warmfold/llm'
import { WARMFOLD_PLUGIN } from '@warmfold/llm'
import type { RequestHeader, Session } from '@warmfold/session'
import type { TokenMeasurement, TokenMeter } from '@warmfold/token-meter'
import { closeOpenCompaction } from './close-open-compaction.ts'
import type { ChooseRegion, HeadCompaction, HeadOutcome, SummaryRoute } from './compact-head.ts'
import { compactHead, emptyCheckpointTokens, foldableNodes, maxHeadTokens, resolveSummaryRoute } from './compact-head.ts'
import type { BasicCompactionConfig, CompactionBudget, ResolvedPolicy } from './compaction-policy.ts'
import { parseCompactionConfig, resolveBudget, resolvePolicy } from './compaction-policy.ts'
import { CompactionRefusal } from './compaction-refusal.ts'
import type { IdleClock } from './idle-clock.ts'
import { installIdleCompaction } from './idle-compaction.ts'
import { resolveIdleCompaction } from './idle-compaction-config.ts'
import type { PlannedPrune, PrunerSeam } from './engine-services.ts'
import { ENGINE_REQUIRED_SERVICES, TOKEN_METER_SERVICE } from './engine-services.ts'
import { planFoldCarry } from './fold-carry.ts'
import { cachePricesOf, decidePrune } from './prune-decision.ts'
import type { SurfaceRegion } from './select-region.ts'
import { selectHeadRegion } from './select-region.ts'
import { backoffHolds, compactionState } from './session-compaction-state.ts'
import type { SummaryRequestInput } from './summary-request.ts'
import { buildSummaryRequest } from './summary-request.ts'

/**
 * The cache-warm compaction engine (`ctx.compaction`). Its summary call replays the routed
 * envelope (C2) and the routed messages of the region plus one instruction (C3); its prune pass
 * rewrites only the retained tail when a summary follows (C4); every rewrite is priced and
 * logged (C5).
 *
 * Subclasses may override the protected seams {@link buildSummaryRequest} and
 * {@link landPrunePlan} (the test kit's reference strategies do); the engine has no switch
 * that turns its cache rules off.
 */
export class BasicCompactionEngine extends CompactionEngine<BasicCompactionEngine.Config> {
  static readonly [WARMFOLD_PLUGIN]: WarmfoldPluginInfo = { packageName: '@warmfold/compaction-basic', provides: 'ctx.compaction' }
  // All optional for cordis: a required inject that is missing keeps the plugin pending without
  // a word (a host that forgot the token meter got no compaction and no warning). Each entry
  // point checks the needed ones instead and throws a MissingServiceError naming the package.
  static inject = { llm: { required: false }, tokenMeter: { required: false }, sessions: { required: false }, toolResultPruner: { required: false } }

  /** The engine's own context: methods called through `ctx.compaction` must not use the caller's. */
  protected readonly owner: Context
  /** The engine's clock (`idle.clock`, real time by default): cache TTLs are judged on it. */
  private readonly clock: IdleClock

  constructor(ctx: Context, config: Parsed<BasicCompactionEngine.Config>) {
    super(ctx, config)
    this.owner = ctx
    const idle = resolveIdleCompaction(config.idle)
    this.clock = idle.clock
    // The provider's TTL runs from each conversation request: the prune decision asks whether it is still warm.
    ctx.on('agent/request', ({ agent }: RequestHookContext) => {
      compactionState(agent.session).lastRequestAt = this.clock.now()
    })
    // A bracket a crash left open is closed before the loop closes the turn it belonged to.
    ctx.on('agent/resume', ({ agent }: ResumeContext) => {
      const state = compactionState(agent.session)
      if (!state.busy) closeOpenCompaction(agent.session)
    })
    // The `CompactionEngine` base wires pressure and overflow triggers unless `auto` is false.
    if (idle.enabled && config.auto !== false) {
      installIdleCompaction(ctx, {
        compactIfNeeded: (agent, trigger, signal) => this.compactIfNeeded(agent, trigger, signal),
        idleTarget: async (session, header) => {
          const { budget } = await this.budgetFor(session, header)
          const { cacheTtlMs } = await this.owner.llm.resolveModelInfo(header.config.provider, header.config.model)
          return { thresholdTokens: budget.thresholdTokens, ...(cacheTtlMs === undefined ? {} : { ttlMs: cacheTtlMs }) }
        },
        requestTokens: (session) => this.meter.measure(session).totalTokens,
      }, idle)
    }
  }

  /** @throws MissingServiceError when the token meter, the runtime or the session store is not mounted. */
  async compactIfNeeded(agent: CompactionAgent, trigger: CompactionTrigger, signal?: AbortSignal): Promise<CompactionResult | null> {
    this.requireServices()
    const session = agent.session
    const header = session.requestHeader()
    if (!header || signal?.aborted) return null
    const state = compactionState(session)
    if (state.busy) return null
    state.busy = true
    try {
      this.closeInterrupted(session)
      if (trigger === 'idle') return await this.foldWhileWarm(session, header, signal)
      return trigger === 'pressure' ? await this.relievePressure(session, header, signal) : await this.recoverOverflow(session, header, signal)
    } finally {
      state.busy = false
    }
  }

  async compactNow(agent: ManualCompactionAgent, signal?: AbortSignal): Promise<CompactionResult | null> {
    this.requireServices()
    if (signal?.aborted) throw new ManualCompactionError('cancelled', `manual compaction cancelled before it started: ${String(signal.reason)}`)
    try {
      return await agent.runMaintenance((agentSignal) => this.compactIdle(agent.session, signal ? AbortSignal.any([agentSignal, signal]) : agentSignal))
    } catch (error) {
      if (ManualCompactionError.isInstance(error)) throw error
      if ((error as { code?: unknown })?.code === 'BUSY') throw new ManualCompactionError('busy', (error as Error).message, { cause: error })
      throw error
    }
  }

  async compactRegion(start: number, end: number, agent: CompactionAgent, signal?: AbortSignal): Promise<CompactionResult> {
    this.requireServices()
    const session = agent.session
    const header = session.requestHeader()
    if (!header) throw new Error(`compactRegion: session ${session.id} has no request header yet, so there is no route to summarize with`)
    const size = session.surface.nodes.length
    if (!Number.isInteger(start) || !Number.isInteger(end) || start < 0 || end < start || end >= size) {
      throw new RangeError(`compactRegion: ${start}..${end} is not a range of surface positions 0..${size - 1}`)
    }
    const cuts = balancedCuts(session.deriveMessages())
    if (!cuts[start] || !cuts[end + 1]) throw new RangeError(`compactRegion: ${start}..${end} separates a tool call from its result (${cuts[start] ? 'end' : 'start'} edge)`)
    const state = compactionState(session)
    if (state.busy) throw new Error(`compactRegion: a compaction of session ${session.id} is already running`)
    state.busy = true
    try {
      this.closeInterrupted(session)
      const outcome = await this.compactHead(session, header, await this.route(header), () => ({ start, end }), { trigger: 'manual', turn: state.openTurn, stability: 'selected-span', signal })
      if (outcome.kind !== 'done') throw new CompactionRefusal('summary', outcome.reason)
      return outcome.result
    } finally {
      state.busy = false
    }
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
  protected landPrunePlan(session: Session, pruner: PrunerSeam, plan: readonly PlannedPrune[], region: SurfaceRegion): void {
    const tail = new Set(plan.filter((entry) => entry.position > region.end).map((entry) => entry.seq))
    if (tail.size) pruner.pruneSession(session, (seq) => tail.has(seq))
  }

  /** The routed policy's `maxOverflowRetries`; 0 before the session has a header (no route yet). */
  protected override maxOverflowRetries(agent: CompactionAgent): number {
    const header = agent.session.requestHeader()
    if (!header) return 0
    return resolvePolicy(this.config, header.config.provider, header.config.model).maxOverflowRetries
  }

  /** Surface tokens, as the token meter prices them. */
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

  private async budgetFor(session: Session, header: RequestHeader): Promise<{ policy: ResolvedPolicy; budget: CompactionBudget; info: ModelInfo }> {
    const { provider, model } = header.config
    const policy = resolvePolicy(this.config, provider, model)
    const info = await this.owner.llm.resolveModelInfo(provider, model)
    const reserved = header.config.maxTokens ?? info.defaultMaxTokens ?? 0
    return { policy, budget: resolveBudget(policy, info.contextWindow, reserved, `${provider}/${model} (session ${session.id})`), info }
  }

  /**
   * Weighs a prune pass that alone clears the pressure against folding now (see
   * `decidePrune`) and logs the decision with its figures as `compaction/prune-decision`.
   */
  private decidePrune(
    session: Session,
    header: RequestHeader,
    info: ModelInfo,
    plan: readonly PlannedPrune[],
    measurement: TokenMeasurement,
    thresholdTokens: number,
    overrule?: Pick<PruneDecisionData, 'action' | 'reason'>,
  ): PruneDecisionData {
    const target = `${header.config.provider}/${header.config.model} (session ${session.id})`
    const weighed = decidePrune({
      session,
      plan,
      measurement,
      thresholdTokens,
      prices: cachePricesOf(info.cachePrices, target),
      cacheTtlMs: info.cacheTtlMs,
      lastRequestAt: compactionState(session).lastRequestAt,
      now: this.clock.now(),
    })
    const decision = overrule ? { ...weighed, ...overrule } : weighed
    session.append('compaction/prune-decision', decision)
    return decision
  }

  private async relievePressure(session: Session, header: RequestHeader, signal?: AbortSignal): Promise<CompactionResult | null> {
    const { policy, budget, info } = await this.budgetFor(session, header)
    const meter = this.meter
    let measurement = meter.measure(session)
    if (measurement.totalTokens < budget.thresholdTokens) return null
    const state = compactionState(session)
    if (backoffHolds(state, session)) return null
    const route = await this.route(header, policy)
    let result: CompactionResult | null = null
    let reason = 'no balanced head region is left to summarize: the retained tail alone is above the threshold'
    // A prune that alone would clear the pressure, declined because folding costs less: the
    // fallback when the fold then cannot relieve the pressure.
    let declinedPrune = false
    for (let attempt = 0; attempt <= policy.compactionRetries; attempt++) {
      if (signal?.aborted) break
      const pruner = this.pruner
      const plan = pruner ? pruner.planSession(session) : []
      const saved = plan.reduce((sum, entry) => sum + entry.originalTokens - entry.prunedTokens, 0)
      if (pruner && plan.length > 0 && measurement.totalTokens - saved < budget.thresholdTokens) {
        // Pruning alone clears the pressure and no summary call follows, so it may rewrite
        // anywhere; it lands only where that costs less than the re-prefill it causes.
        if (this.decidePrune(session, header, info, plan, measurement, budget.thresholdTokens).action === 'prune') {
          pruner.pruneSession(session)
          state.backoff = undefined
          return result
        }
        declinedPrune = true
      }
      const actual = measurement.nodes.map((node) => node.tokens)
      const prices = actual.slice()
      for (const entry of plan) prices[entry.position] = entry.prunedTokens
      // The retained tail is measured as the conversation last sent it, so the region is the one
      // a session without the pruner would fold, and the prune (after the region, rule C4) makes
      // the request after the fold smaller. Measured on post-prune prices, the freed budget was
      // spent on a longer tail instead, and the pruner saved nothing at a fold.
      const retained = selectHeadRegion(session, actual, budget.retainTokens)
      if (!retained) break
      // At best the calls of this pressure fold what fits them into an empty checkpoint; when even
      // that leaves the request at or above the threshold, no summary call can relieve the
      // pressure, so none is made.
      const maxHead = maxHeadTokens(this.owner, header, route)
      const empty = emptyCheckpointTokens(this.owner)
      const foldable = foldableNodes(actual, balancedCuts(session.deriveMessages()), retained.end, maxHead, policy.compactionRetries + 1 - attempt, empty)
      const headTokens = prices.slice(0, foldable).reduce((sum, price) => sum + price, 0)
      // Pinned messages of the head stay after the checkpoint whatever is folded.
      const pinnedTokens = foldable === 0 ? 0 : planFoldCarry(session, { start: 0, end: foldable - 1 }, (position) => prices[position] as number).carriedTokens
      const best = measurement.totalTokens - saved - headTokens + pinnedTokens + empty
      if (foldable === 0 || best >= budget.thresholdTokens) {
        reason =
          maxHead <= 0
            ? `a summary call to ${route.policy.summarizationModel ?? header.config.model} has no room for any history: its ${route.limitTokens}-token budget goes to the system prompt, the tools, the instruction and the output (${route.outputReserveTokens ? `the reasoning effort's ${route.outputReserveTokens}-token output reserve plus ` : ''}the summary's own budget)`
            : foldable === 0
            ? `the oldest balanced segment of the surface does not fit the summary budget (${maxHead} tokens of head), so nothing can be summarized`
            : `the retained tail is irreducible: summarizing positions 0..${foldable - 1} (about ${headTokens} tokens${pinnedTokens ? `, ${pinnedTokens} of them pinned` : ''}) would still leave about ${best} tokens, at or above the threshold`
        break
      }
      // The head the summary prompt can hold; it replays the head unpruned, at its actual prices.
      const region = selectHeadRegion(session, actual, budget.retainTokens, { prices: actual, maxTokens: maxHead })
      if (!region) {
        reason = 'no balanced head region fits the summary budget'
        break
      }
      if (pruner && plan.length > 0) this.landPrunePlan(session, pruner, plan, region)
      // A retry after a context-length rejection picks a smaller head of the same surface, so
      // every landed prune stays after it (rule C4).
      let first: SurfaceRegion | null = region
      const choose: ChooseRegion = (current, maxHead) => {
        const chosen = first ?? selectHeadRegion(session, current, budget.retainTokens, { prices: current, maxTokens: maxHead })
        first = null
        return chosen
      }
      let outcome: HeadOutcome
      try {
        outcome = await this.compactHead(session, header, route, choose, { trigger: 'pressure', turn: state.openTurn, stability: 'whole-surface', signal })
      } catch (error) {
        if (!(error instanceof CompactionRefusal)) throw error
        if (error.code === 'cancelled') return result
        reason = `the summary was refused: ${error.message}`
        break
      }
      if (outcome.kind !== 'done') {
        reason = outcome.reason
        break
      }
      result = outcome.result
      measurement = meter.measure(session)
      if (measurement.totalTokens < budget.thresholdTokens) {
        state.backoff = undefined
        return result
      }
      reason = `still above the threshold after ${attempt + 1} compaction pass(es)`
    }
    if (signal?.aborted) return result
    // A fold attempt that failed may still have landed its tail prune, which can be enough.
    measurement = meter.measure(session)
    if (measurement.totalTokens < budget.thresholdTokens) {
      state.backoff = undefined
      return result
    }
    const pruner = this.pruner
    if (declinedPrune && result === null && pruner) {
      // The fold that was cheaper could not be made: pruning still relieves the pressure.
      const plan = pruner.planSession(session)
      if (plan.length > 0) {
        this.decidePrune(session, header, info, plan, measurement, budget.thresholdTokens, { action: 'prune', reason: `the fold could not relieve the pressure (${reason}), so the prune lands after all` })
        pruner.pruneSession(session)
        state.backoff = undefined
        return result
      }
    }
    session.append('compaction/failure', { trigger: 'pressure', reason, totalTokens: measurement.totalTokens, thresholdTokens: budget.thresholdTokens })
    state.backoff = { turn: state.openTurn, replaceGeneration: session.surface.replaceGeneration }
    return result
  }

  /**
   * The idle fold, when the request is at least `idle.minPressure` × the threshold: the largest
   * head that fits (the whole surface when it does), so the summary call replays the last
   * request's messages exactly plus the instruction. That is the prefix whose cache entry is
   * still warm: a provider that caches only at breakpoints (Anthropic) holds no live entry at the
   * end of an older head, so a pressure-sized head would be re-prefilled in full. It runs between
   * turns, so the whole surface must stay unchanged (a followup aborts it through `signal`).
   */
  private async foldWhileWarm(session: Session, header: RequestHeader, signal?: AbortSignal): Promise<CompactionResult | null> {
    const { policy, budget } = await this.budgetFor(session, header)
    const { minPressure } = resolveIdleCompaction(this.config.idle)
    const totalTokens = this.meter.measure(session).totalTokens
    if (totalTokens < minPressure * budget.thresholdTokens || signal?.aborted) return null
    const fail = (reason: string) => void session.append('compaction/failure', { trigger: 'idle', reason, totalTokens, thresholdTokens: budget.thresholdTokens })
    try {
      const outcome = await this.compactHead(session, header, await this.route(header, policy), maximalHead(session), { trigger: 'idle', turn: null, stability: 'whole-surface', signal })
      if (outcome.kind === 'done') return outcome.result
      fail(outcome.reason)
    } catch (error) {
      if (!(error instanceof CompactionRefusal)) throw error
      // Cancelled by user input: the bracket says so, and the input's turn runs next.
      if (error.code !== 'cancelled') fail(`the summary was refused: ${error.message}`)
    }
    return null
  }

  private async recoverOverflow(session: Session, header: RequestHeader, signal?: AbortSignal): Promise<CompactionResult | null> {
    // The summary prompt itself must fit, so prune everywhere first.
    this.pruner?.pruneSession(session)
    try {
      const outcome = await this.compactHead(session, header, await this.route(header), maximalHead(session), {
        trigger: 'context-overflow',
        turn: compactionState(session).openTurn,
        stability: 'whole-surface',
        signal,
      })
      return outcome.kind === 'done' ? outcome.result : null
    } catch (error) {
      if (error instanceof CompactionRefusal) return null
      throw error
    }
  }

  private async compactIdle(session: Session, signal: AbortSignal): Promise<CompactionResult | null> {
    const header = session.requestHeader()
    if (!header) return null
    const state = compactionState(session)
    if (state.busy) throw new ManualCompactionError('busy', `a compaction of session ${session.id} is already running`)
    state.busy = true
    let result: CompactionResult
    try {
      this.closeInterrupted(session)
      const outcome = await this.compactHead(session, header, await this.route(header), maximalHead(session), { trigger: 'manual', turn: null, stability: 'selected-span', signal })
      if (outcome.kind === 'nothing') return null
      if (outcome.kind === 'unfit') throw new ManualCompactionError('summary', outcome.reason)
      result = outcome.result
    } catch (error) {
      if (error instanceof CompactionRefusal) throw new ManualCompactionError(error.code, error.message, { cause: error })
      throw error
    } finally {
      state.busy = false
    }
    try {
      await this.owner.sessions.flush(session)
    } catch (error) {
      throw new ManualCompactionError('persistence', `the checkpoint was committed but the session could not be flushed: ${(error as Error).message}`, { cause: error })
    }
    return result
  }

  /** The summary route of `header` (the routed policy resolved unless given). */
  private route(header: RequestHeader, routed?: ResolvedPolicy): Promise<SummaryRoute> {
    return resolveSummaryRoute(this.owner, this.config, header, routed ?? resolvePolicy(this.config, header.config.provider, header.config.model))
  }

  private compactHead(session: Session, header: RequestHeader, route: SummaryRoute, choose: ChooseRegion, rest: Pick<HeadCompaction, 'trigger' | 'turn' | 'stability' | 'signal'>): Promise<HeadOutcome> {
    // Which user messages survive is the conversation's policy, not the summary target's.
    const { keepUserMessages } = resolvePolicy(this.config, header.config.provider, header.config.model)
    return compactHead(this.owner, { session, header, route, choose, ...rest, keepUserMessages, buildRequest: (input) => this.buildSummaryRequest(input) })
  }

  /** Ends a bracket a crashed process left open, so the log stays valid before a new one starts. */
  private closeInterrupted(session: Session): void {
    closeOpenCompaction(session)
  }
}

/** Chooses the largest balanced head whose summary prompt fits (retain 0: overflow, manual). */
function maximalHead(session: Session): ChooseRegion {
  return (prices, maxHead) => selectHeadRegion(session, prices, 0, { prices, maxTokens: maxHead })
}

export namespace BasicCompactionEngine {
  export type Config = ReturnType<typeof parseCompactionConfig>
  export const Config: ConfigParser<Config> = parseCompactionConfig
}

export type { BasicCompactionConfig }
