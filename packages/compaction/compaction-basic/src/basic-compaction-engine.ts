import type { Context } from '@cordisjs/core'
import type { CompactionAgent, CompactionResult, CompactionTrigger, ManualCompactionAgent } from '@warmfold/compaction'
import { balancedCuts, CompactionEngine, isCheckpointMessage, ManualCompactionError } from '@warmfold/compaction'
import type { ConfigParser, GenerateOptions } from '@warmfold/llm'
import type { RequestHeader, Session } from '@warmfold/session'
import type { TokenMeter } from '@warmfold/token-meter'
import type { BasicCompactionConfig, CompactionBudget, ResolvedPolicy } from './compaction-policy.ts'
import { parseCompactionConfig, resolveBudget, resolvePolicy } from './compaction-policy.ts'
import { CompactionRefusal } from './compaction-refusal.ts'
import { runTransaction } from './compaction-transaction.ts'
import { installCompactionListeners } from './install-compaction-listeners.ts'
import type { SurfaceRegion } from './select-region.ts'
import { selectRegion } from './select-region.ts'
import { compactionState } from './session-compaction-state.ts'
import type { SummaryRequestInput } from './summary-request.ts'
import { buildSummaryRequest, instructionMessage, summaryTarget } from './summary-request.ts'

/** One planned tool-result rewrite, as the engine prices it (the pruner's plan entries fit). */
export interface PlannedPrune {
  readonly seq: number
  readonly position: number
  readonly originalTokens: number
  readonly prunedTokens: number
}

/** What the engine needs of `ctx.toolResultPruner`. */
export interface PrunerSeam {
  planSession(session: Session, include?: (seq: number) => boolean): readonly PlannedPrune[]
  pruneSession(session: Session, include?: (seq: number) => boolean): unknown
}

/** Summary attempts in one overflow recovery, each with a head half the size of the last. */
export const OVERFLOW_SUMMARY_ATTEMPTS = 3

/** After an irreducible-tail failure, wait until the request grew by this share of the window. */
export const BACKOFF_GROWTH_RATIO = 0.05

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
  static inject = { llm: { required: true }, tokenMeter: { required: true }, sessions: { required: true }, toolResultPruner: { required: false } }

  /** The engine's own context: methods called through `ctx.compaction` must not use the caller's. */
  protected readonly owner: Context

  constructor(ctx: Context, config: BasicCompactionEngine.Config) {
    super(ctx, config)
    this.owner = ctx
    if (config.auto) installCompactionListeners(ctx, this, config)
  }

  async compactIfNeeded(agent: CompactionAgent, trigger: CompactionTrigger, signal?: AbortSignal): Promise<CompactionResult | null> {
    const session = agent.session
    const header = session.requestHeader()
    if (!header || signal?.aborted) return null
    const state = compactionState(session)
    if (state.busy) return null
    state.busy = true
    try {
      this.closeInterrupted(session)
      return trigger === 'pressure' ? await this.relievePressure(session, header, signal) : await this.recoverOverflow(session, header, signal)
    } finally {
      state.busy = false
    }
  }

  async compactNow(agent: ManualCompactionAgent, signal?: AbortSignal): Promise<CompactionResult | null> {
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
      return await this.transaction(session, header, { start, end }, 'manual', state.openTurn, 'selected-span', signal)
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

  private get meter(): TokenMeter {
    return this.owner.tokenMeter
  }

  private get pruner(): PrunerSeam | undefined {
    return (this.owner as unknown as { toolResultPruner?: PrunerSeam }).toolResultPruner
  }

  private async budgetFor(session: Session, header: RequestHeader): Promise<{ policy: ResolvedPolicy; budget: CompactionBudget }> {
    const { provider, model } = header.config
    const policy = resolvePolicy(this.config, provider, model)
    const info = await this.owner.llm.resolveModelInfo(provider, model)
    const reserved = header.config.maxTokens ?? info.defaultMaxTokens ?? 0
    return { policy, budget: resolveBudget(policy, info.contextWindow, reserved, `${provider}/${model} (session ${session.id})`) }
  }

  private async relievePressure(session: Session, header: RequestHeader, signal?: AbortSignal): Promise<CompactionResult | null> {
    const { policy, budget } = await this.budgetFor(session, header)
    const meter = this.meter
    let measurement = meter.measure(session)
    if (measurement.totalTokens < budget.thresholdTokens) return null
    const state = compactionState(session)
    if (state.backoffUntilTokens !== undefined && measurement.totalTokens < state.backoffUntilTokens) return null
    let result: CompactionResult | null = null
    let reason = 'no balanced head region is left to summarize: the retained tail alone is above the threshold'
    for (let attempt = 0; attempt <= policy.compactionRetries; attempt++) {
      if (signal?.aborted) break
      const pruner = this.pruner
      const plan = pruner ? pruner.planSession(session) : []
      const saved = plan.reduce((sum, entry) => sum + entry.originalTokens - entry.prunedTokens, 0)
      if (pruner && plan.length > 0 && measurement.totalTokens - saved < budget.thresholdTokens) {
        // Pruning alone clears the pressure and no summary call follows, so it may rewrite anywhere.
        pruner.pruneSession(session)
        state.backoffUntilTokens = undefined
        return result
      }
      const prices = measurement.nodes.map((node) => node.tokens)
      for (const entry of plan) prices[entry.position] = entry.prunedTokens
      const region = selectHead(session, prices, budget.retainTokens)
      if (!region) break
      if (pruner && plan.length > 0) this.landPrunePlan(session, pruner, plan, region)
      try {
        result = await this.transaction(session, header, region, 'pressure', compactionState(session).openTurn, 'whole-surface', signal, policy)
      } catch (error) {
        if (!(error instanceof CompactionRefusal)) throw error
        if (error.code === 'cancelled') return result
        reason = `the summary was refused: ${error.message}`
        break
      }
      measurement = meter.measure(session)
      if (measurement.totalTokens < budget.thresholdTokens) {
        state.backoffUntilTokens = undefined
        return result
      }
      reason = `still above the threshold after ${attempt + 1} compaction pass(es)`
    }
    if (signal?.aborted) return result
    session.append('compaction/failure', { trigger: 'pressure', reason, totalTokens: measurement.totalTokens, thresholdTokens: budget.thresholdTokens })
    state.backoffUntilTokens = measurement.totalTokens + Math.max(1, Math.floor(budget.contextWindow * BACKOFF_GROWTH_RATIO))
    return result
  }

  private async recoverOverflow(session: Session, header: RequestHeader, signal?: AbortSignal): Promise<CompactionResult | null> {
    // The summary prompt itself must fit the window, so prune everywhere first.
    this.pruner?.pruneSession(session)
    const measurement = this.meter.measure(session)
    const prices = measurement.nodes.map((node) => node.tokens)
    let retain = await this.retainToFit(header, measurement.surfaceTokens)
    // Token estimates can be low for a provider's tokenizer: when the provider rejects the
    // summary prompt itself as too long, try again with a head half as large.
    for (let attempt = 0; attempt < OVERFLOW_SUMMARY_ATTEMPTS; attempt++) {
      const region = selectHead(session, prices, retain)
      if (!region) return null
      try {
        return await this.transaction(session, header, region, 'context-overflow', compactionState(session).openTurn, 'whole-surface', signal)
      } catch (error) {
        if (!(error instanceof CompactionRefusal)) throw error
        if (error.llmCode !== 'CONTEXT_WINDOW_EXCEEDED' || signal?.aborted) return null
        const regionTokens = prices.slice(region.start, region.end + 1).reduce((sum, price) => sum + price, 0)
        retain = measurement.surfaceTokens - Math.floor(regionTokens / 2)
      }
    }
    return null
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
      const measurement = this.meter.measure(session)
      const prices = measurement.nodes.map((node) => node.tokens)
      const region = selectHead(session, prices, await this.retainToFit(header, measurement.surfaceTokens))
      if (!region) return null
      result = await this.transaction(session, header, region, 'manual', null, 'selected-span', signal)
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

  private async transaction(
    session: Session,
    header: RequestHeader,
    region: SurfaceRegion,
    trigger: 'pressure' | 'context-overflow' | 'manual',
    turn: number | null,
    stability: 'whole-surface' | 'selected-span',
    signal?: AbortSignal,
    routedPolicy?: ResolvedPolicy,
  ): Promise<CompactionResult> {
    const routed = routedPolicy ?? resolvePolicy(this.config, header.config.provider, header.config.model)
    // The summary target's own override decides the summary cap when a summarization route is set.
    const target = summaryTarget(header, routed)
    const policy = target.provider === header.config.provider && target.model === header.config.model ? routed : { ...resolvePolicy(this.config, target.provider, target.model), summarizationProvider: routed.summarizationProvider, summarizationModel: routed.summarizationModel }
    const { contextWindow } = await this.owner.llm.resolveModelInfo(target.provider, target.model)
    return runTransaction(this.owner, { session, header, policy, region, trigger, turn, stability, signal, targetContextWindow: contextWindow, buildRequest: (input) => this.buildSummaryRequest(input) })
  }

  /**
   * The retain budget for a maximal compaction (overflow, manual): 0, unless the summary prompt
   * would not fit the summary target's window; then enough of the tail stays that the replayed
   * head, the envelope, the instruction and an output reserve fit.
   */
  private async retainToFit(header: RequestHeader, surfaceTokens: number): Promise<number> {
    const routed = resolvePolicy(this.config, header.config.provider, header.config.model)
    const target = summaryTarget(header, routed)
    const { contextWindow } = await this.owner.llm.resolveModelInfo(target.provider, target.model)
    const reserve = Math.min(resolvePolicy(this.config, target.provider, target.model).maxTokens, Math.floor(contextWindow / 4))
    const envelope = this.meter.estimateSystem(header.system) + this.meter.estimateTools(header.tools) + this.meter.estimateMessage(instructionMessage())
    return Math.max(0, surfaceTokens - (contextWindow - envelope - reserve))
  }

  /** Ends a bracket a crashed process left open, so the log stays valid before a new one starts. */
  private closeInterrupted(session: Session): void {
    const open = compactionState(session).openCompaction
    if (!open) return
    session.append('compaction/end', { compactionId: open.compactionId, turn: open.turn, error: 'interrupted: the process ended before this compaction finished' })
  }
}

/**
 * The head region to summarize, or `null`. A region that is only the previous checkpoint is
 * not compactable: summarizing a summary alone cannot shrink it.
 */
function selectHead(session: Session, prices: readonly number[], retainTokens: number): SurfaceRegion | null {
  const messages = session.deriveMessages()
  const region = selectRegion(prices, balancedCuts(messages), retainTokens)
  if (region && region.end === 0 && isCheckpointMessage(messages[0]!)) return null
  return region
}

export namespace BasicCompactionEngine {
  export type Config = ReturnType<typeof parseCompactionConfig>
  export const Config: ConfigParser<Config> = parseCompactionConfig
}

export type { BasicCompactionConfig }
