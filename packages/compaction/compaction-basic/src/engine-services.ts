import type { Message } from '@warmfold/llm'
import type { ServiceRequirement } from '@warmfold/agent-loop'
import { LLM_RUNTIME_SERVICE, SESSION_STORE_SERVICE } from '@warmfold/agent-loop'
import type { Session } from '@warmfold/session'

/** `ctx.tokenMeter`, which every measurement of the engine needs. */
export const TOKEN_METER_SERVICE: ServiceRequirement = Object.freeze({
  service: 'tokenMeter',
  packageName: '@warmfold/token-meter',
  plugin: 'TokenMeter',
})

/** The services `BasicCompactionEngine` cannot work without; checked at every entry point. */
export const ENGINE_REQUIRED_SERVICES: readonly ServiceRequirement[] = Object.freeze([
  TOKEN_METER_SERVICE,
  LLM_RUNTIME_SERVICE,
  SESSION_STORE_SERVICE,
])

/** One planned tool-result rewrite, as the engine prices it (the pruner's plan entries fit). */
export interface PlannedPrune {
  readonly seq: number
  readonly position: number
  readonly originalTokens: number
  readonly prunedTokens: number
  /** The message that would replace it (pruners that provide it; a prewarm needs the exact bytes). */
  readonly replacement?: Message
}

/** What the engine needs of `ctx.toolResultPruner` (optional). */
export interface PrunerSeam {
  planSession(session: Session, include?: (seq: number) => boolean): readonly PlannedPrune[]
  pruneSession(session: Session, include?: (seq: number) => boolean): unknown
}
