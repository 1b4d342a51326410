import type { ContentBlock, GenerateOptions, ModelInfo } from '@warmfold/llm'
import { textBlock, toolCallBlock } from '@warmfold/llm'
import { ScriptedAdapter } from '@warmfold/llm/testing'
import type { CacheObservation } from './cache-observation.ts'
import { tokensOf } from './cache-profile.ts'
import { codingStep } from './coding-workload.ts'
import { lossySummary } from './lossy-summary.ts'
import type { RegionRecord } from './recording-engine.ts'
import { requestLatencyMs } from './request-latency.ts'
import type { VirtualClock } from './virtual-clock.ts'
import type { ResolvedWorkload } from './workload-options.ts'
import { minimumWorkloadSummaryTokens, workloadSummary } from './workload-summary.ts'
import { fillerText } from './workload-text.ts'

/** The provider and model the scripted conversation runs on. */
export const WORKLOAD_ROUTE = { provider: 'sim', model: 'coder' } as const

/**
 * The scripted model of the workload: its conversation steps, its summaries (realistic
 * checkpoints, lossy on the coding workload) and each request's modelled time on the virtual
 * clock.
 */
export function workloadModel(
  workload: ResolvedWorkload,
  recordOutput: (request: GenerateOptions, tokens: number) => void,
  charged: (request: GenerateOptions) => CacheObservation | undefined,
  ttlMs: number,
  clock: VirtualClock,
  regions: RegionRecord,
): ScriptedAdapter {
  // The model carries the simulator profile's TTL, as an adapter carries its provider's.
  const cacheTtl = Number.isFinite(ttlMs) ? { cacheTtlMs: ttlMs } : {}
  // And the prices the run is billed at, as an adapter carries its provider's.
  const cachePrices = workload.cachePrices ? { cachePrices: workload.cachePrices } : {}
  const limits = { contextWindow: workload.window, defaultMaxTokens: workload.defaultMaxTokens }
  const models: Record<string, ModelInfo> = {
    [WORKLOAD_ROUTE.model]: {
      ...limits,
      reasoning: { efforts: ['low', 'high', 'max'], defaultEffort: 'high' },
      ...cacheTtl,
      ...cachePrices,
    },
  }
  if (workload.summaryRoute)
    models[workload.summaryRoute.model] ??= { ...limits, reasoning: { efforts: ['low', 'high'], defaultEffort: 'low' } }
  let step = 0
  let turn = 0
  let turnEnd = workload.turnSteps[0] as number
  let folds = 0
  const answer = (request: GenerateOptions): ContentBlock[] => {
    if (request.purpose === 'compaction') {
      // A realistic checkpoint (1.5k-4k tokens), cut to the call's cap (never below one bullet a section).
      const fold = folds++
      const cap =
        request.maxTokens === undefined
          ? {}
          : { maxTokens: Math.max(request.maxTokens, minimumWorkloadSummaryTokens(fold)) }
      const { resultChars: readChars, turns } = workload
      if (workload.workload === 'coding')
        return [textBlock(lossySummary(fold, regions.latest ?? [], { readChars, turns, ...cap }))]
      return [textBlock(workloadSummary(fold, cap))]
    }
    if (request.purpose !== 'conversation') return [textBlock('ok')]
    if (step >= turnEnd) {
      const last = turn === workload.turns - 1
      const text = last
        ? `All ${workload.steps} modules are read; the loader refactor plan is ready.`
        : `Modules 0 to ${step - 1} are read; ${workload.steps - step} to go.`
      if (!last) turnEnd += workload.turnSteps[++turn] as number
      return [textBlock(text)]
    }
    const index = step++
    const call =
      workload.workload === 'coding'
        ? codingStep(index, workload.resultChars)
        : { name: 'read_file', arguments: `{"path":"src/module-${index}.ts"}` }
    return [
      textBlock(fillerText(1000 + index, workload.proseChars)),
      toolCallBlock(`call-${index}`, call.name, call.arguments),
    ]
  }
  return new ScriptedAdapter({
    models,
    responses: async (request) => {
      const content = answer(request)
      const outputTokens = tokensOf(content.reduce((chars, block) => chars + outputChars(block), 0))
      recordOutput(request, outputTokens)
      // Every request takes its modelled time on the virtual clock (prefill what it missed, read
      // what it hit, decode its output). The conversation waits for its own requests; a summary
      // call or a prewarm sleeps beside it, and whoever waits for it moves the clock on.
      const charge = charged(request)
      const latencyMs = charge ? requestLatencyMs({ ...charge, outputTokens }, workload.latency) : 0
      if (request.purpose === 'conversation') await clock.advance(latencyMs)
      else await clock.sleep(latencyMs)
      return { content }
    },
  })
}

/** Characters of an answer block that count as output: a text, a tool call's name and arguments. */
function outputChars(block: ContentBlock): number {
  if (block.type === 'text') return block.text.length
  return block.type === 'tool-call' ? block.name.length + block.arguments.length : 0
}
