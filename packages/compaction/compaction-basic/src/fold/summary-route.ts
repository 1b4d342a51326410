import type { Context } from '@cordisjs/core'
import type { RequestHeader } from '@warmfold/session'
import type { BasicCompactionConfig, ResolvedPolicy } from '../config/compaction-policy.ts'
import { resolvePolicy } from '../config/compaction-policy.ts'
import { MIN_SUMMARY_OUTPUT_TOKENS, summaryLimit } from './summary-budget.ts'
import { instructionMessage, summaryTarget } from './summary-request.ts'

/** Where summary calls go and how many tokens they may spend. */
export interface SummaryRoute {
  /** The summary target's policy (its own override decides the cap and margin). */
  readonly policy: ResolvedPolicy
  /** Prompt estimate + `maxTokens` budget: the target's window minus the margin. */
  readonly limitTokens: number
  /**
   * Output tokens the summary call's effort spends or requires before answer text on the target
   * (`ModelInfo.reasoning.outputReserveTokens`, e.g. Anthropic's thinking budget): the call's
   * `maxTokens` is this plus the policy's `maxTokens`, so the summary keeps its whole budget.
   */
  readonly outputReserveTokens: number
}

/** The summary target of `header` under `routed`, with its policy and token budget. */
export async function resolveSummaryRoute(
  ctx: Context,
  config: BasicCompactionConfig,
  header: RequestHeader,
  routed: ResolvedPolicy,
): Promise<SummaryRoute> {
  const target = summaryTarget(header, routed)
  const sameRoute = target.provider === header.config.provider && target.model === header.config.model
  const policy = sameRoute
    ? routed
    : {
        ...resolvePolicy(config, target.provider, target.model),
        summarizationProvider: routed.summarizationProvider,
        summarizationModel: routed.summarizationModel,
      }
  const { contextWindow, reasoning } = await ctx.llm.resolveModelInfo(target.provider, target.model)
  // The effort the call will carry: the header's on the same route (already materialized),
  // else the target's default (nothing is inherited across routes).
  const effort = sameRoute ? header.config.reasoningEffort : reasoning?.defaultEffort
  const outputReserveTokens = effort === undefined ? 0 : (reasoning?.outputReserveTokens?.[effort] ?? 0)
  return { policy, limitTokens: summaryLimit(contextWindow, policy.summaryMarginRatio), outputReserveTokens }
}

/**
 * The largest head (in surface tokens) whose summary prompt fits `limitTokens`: the limit less
 * the envelope, the instruction, the effort's output reserve and room for the summary of
 * `min(maxTokens, limit / 4)`, at least {@link MIN_SUMMARY_OUTPUT_TOKENS}.
 */
export function maxHeadTokens(
  ctx: Context,
  header: RequestHeader,
  route: SummaryRoute,
  limitTokens = route.limitTokens,
): number {
  const meter = ctx.tokenMeter
  const reserve =
    route.outputReserveTokens +
    Math.max(MIN_SUMMARY_OUTPUT_TOKENS, Math.min(route.policy.maxTokens, Math.floor(limitTokens / 4)))
  const envelope =
    meter.estimateSystem(header.system) +
    meter.estimateTools(header.tools) +
    meter.estimateMessage(instructionMessage())
  return limitTokens - envelope - reserve
}
