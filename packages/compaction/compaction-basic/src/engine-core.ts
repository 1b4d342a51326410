import type { Context } from '@cordisjs/core'
import type { CompactionAgent } from '@warmfold/compaction'
import type { GenerateOptions, ModelInfo } from '@warmfold/llm'
import type { RequestHeader, Session } from '@warmfold/session'
import type { TokenMeter } from '@warmfold/token-meter'
import type { ChooseRegion, HeadCompaction, HeadOutcome } from './fold/compact-head.ts'
import type { SummaryRoute } from './fold/summary-route.ts'
import type { CompactionBudget } from './config/compaction-budget.ts'
import type { ParsedCompactionConfig, ResolvedPolicy } from './config/compaction-policy.ts'
import type { EngineClock } from './engine-clock.ts'
import type { ResolvedFoldAudit } from './config/fold-audit-config.ts'
import type { PlannedPrune, PrunerSeam } from './engine-services.ts'
import type { SurfaceRegion } from './fold/select-region.ts'
import type { SummaryRequestInput } from './fold/summary-request.ts'

/** A route's policy, token budget and model info, for one session. */
export interface EngineBudget {
  readonly policy: ResolvedPolicy
  readonly budget: CompactionBudget
  readonly info: ModelInfo
}

/**
 * What the triggers (pressure, overflow, idle, background, manual: *when* to fold) get from the
 * engine: its services, policy and one way to fold a head (*how*), which goes through the
 * engine's protected seams, so a subclass's `buildSummaryRequest` and `landPrunePlan` apply to
 * every trigger. None of the triggers builds a request itself.
 */
export interface EngineCore {
  readonly ctx: Context
  readonly config: ParsedCompactionConfig
  /** The clock folds are timed on (`clock`, else `idle.clock`, else real time). */
  readonly clock: EngineClock
  /** `audit` and `artifactTrail` with defaults applied: every fold transaction runs them. */
  readonly foldAudit: ResolvedFoldAudit
  /** The token meter; throws `MissingServiceError` when it is not mounted. */
  meter(): TokenMeter
  pruner(): PrunerSeam | undefined
  budgetFor(session: Session, header: RequestHeader): Promise<EngineBudget>
  /** The summary route of `header` (the routed policy resolved unless given). */
  route(header: RequestHeader, routed?: ResolvedPolicy): Promise<SummaryRoute>
  /** Folds the head `choose` picks (see `compactHead`), through the engine's seams. */
  compactHead(
    agent: CompactionAgent,
    header: RequestHeader,
    route: SummaryRoute,
    choose: ChooseRegion,
    rest: Pick<HeadCompaction, 'trigger' | 'turn' | 'stability' | 'signal'>,
  ): Promise<HeadOutcome>
  buildSummaryRequest(input: SummaryRequestInput): GenerateOptions
  /** The engine's prune seam: lands `plan` for a fold of `region` (only after it, rule C4). */
  landPrunePlan(session: Session, pruner: PrunerSeam, plan: readonly PlannedPrune[], region: SurfaceRegion): void
}
