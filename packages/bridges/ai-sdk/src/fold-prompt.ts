import type { LanguageModelV3, LanguageModelV3CallOptions, LanguageModelV3Message } from '@ai-sdk/provider'
import { balancedCuts } from '@warmfold/compaction'
import type { CompactionBudget, ResolvedPolicy } from '@warmfold/compaction-basic/engine-parts'
import {
  assertShrinks,
  CompactionRefusal,
  frameCheckpoint,
  MIN_SUMMARY_OUTPUT_TOKENS,
  selectRegion,
  summaryLimit,
} from '@warmfold/compaction-basic/engine-parts'
import { bodyValue } from './body-replay.ts'
import { foldAuditor } from './fold-audit.ts'
import type { FoldRecord } from './fold-store.ts'
import type { ParsedMiddlewareOptions } from './middleware-options.ts'
import { prefixDigests } from '@warmfold/cache-ledger/prefix'
import { foldVerdict } from './fold-verdict.ts'
import type { FoldBackOff, FoldReport } from './reports.ts'
import { refusedFold } from './reports.ts'
import type { Lineage } from './sent-requests.ts'
import { estimatePrompt, messageTokens } from './sent-requests.ts'
import { INSTRUCTION_MESSAGE, summarizeThrough } from './summary-calls.ts'
import { warmfoldMessage, warmfoldRequest } from './warmfold-view.ts'

/** One fold of a call's prompt. */
export interface FoldInput {
  readonly trigger: 'pressure' | 'background'
  readonly type: 'generate' | 'stream'
  readonly call: LanguageModelV3CallOptions
  readonly model: LanguageModelV3
  readonly lineage: Lineage
  /** Leading system messages (they stay in place). */
  readonly kept: number
  readonly applied: readonly FoldRecord[]
  readonly estimated: number
  readonly window: number
  readonly policy: ResolvedPolicy
  readonly budget: CompactionBudget
  /** Characters of a request as the cache ledger fingerprints it (`RequestFingerprint.chars`). */
  readonly chars: (call: LanguageModelV3CallOptions) => number
}

/** A committed fold: the call folded, its estimate, and the record that folds later calls. */
export interface FoldedCall {
  readonly call: LanguageModelV3CallOptions
  readonly tokensAfter: number
  readonly record: FoldRecord
}

/** A fold that committed nothing: how its conversation backs off, and whether the caller aborted it. */
export interface RefusedFold {
  readonly backOff: FoldBackOff
  readonly aborted: boolean
}

/** What one fold came to. */
export type FoldOutcome = FoldedCall | RefusedFold

/**
 * Folds the oldest balanced head of `input.call`'s history into one checkpoint message: the
 * engine's region selection, then its summary loop over a replay of the previous request of the
 * same conversation exactly as it was sent, plus one instruction message, so the summary reads
 * that request's cache; with none (the first call is already over the threshold, or the host
 * rewrote its history), the call itself is replayed and the fold is reported cold. The checkpoint
 * carries the engine's artifact trail and the fold its audit. The record is stored before the
 * folded call is sent; every attempt is reported through `onFold`.
 * @returns the folded call, or how the refused fold backs off.
 */
export async function foldPrompt(options: ParsedMiddlewareOptions, input: FoldInput): Promise<FoldOutcome> {
  const { call, lineage, kept, policy, window } = input
  const base = lineage.relation === 'extends' ? lineage.previous : undefined
  const replay = base?.params ?? call
  const type = base?.type ?? input.type
  const refuse = (refusal: string, extra: Partial<FoldReport> = {}, failed = false, aborted = false): RefusedFold => {
    const backOff: FoldBackOff = failed ? { kind: 'failed', calls: options.backOffCalls } : { kind: 'refused' }
    const report = { ...extra, ...(input.trigger === 'pressure' ? { backOff } : {}) }
    options.onFold?.(refusedFold(input.trigger, refusal, input.estimated, report))
    return { backOff, aborted }
  }
  const rest = call.prompt.slice(kept)
  const prices = rest.map(messageTokens)
  // The region lies inside the replayed request and before the latest assistant turn that
  // carries reasoning with provider metadata (its signature must reach the provider unchanged).
  const limit = Math.min(replay.prompt.length, protectedFrom(call.prompt)) - kept
  // A cut past the limit is not offered at all: the region then ends inside it whatever the tail holds.
  const cuts = balancedCuts(rest.map(warmfoldMessage)).map((balanced, position) => balanced && position <= limit)
  const region = selectRegion(prices, cuts, input.budget.retainTokens)
  if (!region) return refuse('no balanced head region is left to summarize: the retained tail alone fills the request')
  const leadingCheckpoint = input.applied.some((record) => record.checkpoint === rest[0])
  if (region.end === 0 && leadingCheckpoint) return refuse('the only foldable message is the previous checkpoint')
  const replayTokens = base?.usage?.inputTokens.total ?? estimatePrompt(replay)
  const promptTokens = replayTokens + messageTokens(INSTRUCTION_MESSAGE)
  const room = summaryLimit(window, policy.summaryMarginRatio) - promptTokens
  if (room < MIN_SUMMARY_OUTPUT_TOKENS)
    return refuse(
      `the summary prompt (about ${promptTokens} tokens) leaves ${Math.max(0, room)} tokens for the checkpoint; ` +
        `at least ${MIN_SUMMARY_OUTPUT_TOKENS} are needed`,
    )
  // The abort signal is the current call's: the replayed request's own may belong to a finished step.
  const { abortSignal: _replayed, ...replayed } = replay
  const summaryRequest: LanguageModelV3CallOptions = {
    ...replayed,
    prompt: [...replay.prompt, INSTRUCTION_MESSAGE],
    maxOutputTokens: Math.min(policy.maxTokens, room),
    ...(call.abortSignal ? { abortSignal: call.abortSignal } : {}),
  }
  const budget = { ...policy.summaryBudget, ceilingTokens: room, deadlineMs: policy.summaryDeadlineMs }
  const outcome = await summarizeThrough(input.model, type, summaryRequest, budget, (summaryCall) =>
    options.onCacheReport?.({
      kind: 'summary',
      relation: lineage.relation,
      estimatedTokens: promptTokens,
      ...(summaryCall.usage ? { usage: summaryCall.usage } : {}),
      ...(summaryCall.requestBody === undefined ? {} : { requestBody: bodyValue(summaryCall.requestBody) }),
    }),
  )
  const summaryChars = input.chars(summaryRequest)
  const toleranceTokens = options.providerToleranceTokens
  const verdict = foldVerdict({ lineage, base, outcome, summaryChars, toleranceTokens })
  if ('refusal' in outcome) return refuse(endsUncommitted(outcome.refusal), verdict, outcome.failed, outcome.aborted)
  const prefixLength = region.end + 1
  const folded = rest.slice(0, prefixLength)
  const shadowedTokens = prices.slice(0, prefixLength).reduce((sum, price) => sum + price, 0)
  const views = folded.map(warmfoldMessage)
  const auditor = options.foldAudit && foldAuditor(options.foldAudit, views, shadowedTokens, leadingCheckpoint)
  const text = auditor ? auditor.checkpointSummary(outcome.summary) : outcome.summary
  const checkpoint: LanguageModelV3Message = { role: 'user', content: [{ type: 'text', text: frameCheckpoint(text) }] }
  const carry = { carriedSeqs: [], shadowedSeqs: [], carriedTokens: 0, shadowedTokens, foldsHistory: true }
  try {
    // The engine's check: a checkpoint no smaller than what it replaces is never committed.
    assertShrinks(messageTokens(checkpoint), carry)
  } catch (error) {
    if (!(error instanceof CompactionRefusal)) throw error
    return refuse(endsUncommitted(error.message), verdict)
  }
  const record: FoldRecord = Object.freeze({
    prefixDigest: prefixDigests(folded).at(-1) as string,
    prefixLength,
    checkpoint,
    createdAt: Date.now(),
  })
  const after = { ...call, prompt: [...call.prompt.slice(0, kept), checkpoint, ...rest.slice(prefixLength)] }
  const sent = warmfoldRequest(input.model.provider, input.model.modelId, summaryRequest)
  const result = outcome.calls.at(-1)!.result
  const audit = auditor?.audit({ text: outcome.summary, sent, result }, after.prompt.map(warmfoldMessage), kept)
  await options.store.append(record)
  const tokensAfter = estimatePrompt(after)
  options.onFold?.({
    committed: true,
    trigger: input.trigger,
    foldedMessages: prefixLength,
    tokensBefore: input.estimated,
    tokensAfter,
    summary: outcome.summary,
    ...verdict,
    ...(audit ? { audit } : {}),
  })
  return { call: after, tokensAfter, record }
}

/** The loop's refusal as the fold report's sentence: every refusal ends saying nothing was committed. */
function endsUncommitted(refusal: string): string {
  return refusal.endsWith('; no checkpoint was committed') ? refusal : `${refusal}; no checkpoint was committed`
}

/**
 * Index of the latest assistant message with reasoning that carries provider options (never
 * folded), else the prompt's length.
 */
function protectedFrom(prompt: readonly LanguageModelV3Message[]): number {
  for (let index = prompt.length - 1; index >= 0; index--) {
    const message = prompt[index]!
    if (message.role !== 'assistant') continue
    return message.content.some((part) => part.type === 'reasoning' && part.providerOptions !== undefined)
      ? index
      : prompt.length
  }
  return prompt.length
}
