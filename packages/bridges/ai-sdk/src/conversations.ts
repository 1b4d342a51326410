import type { LanguageModelV3, LanguageModelV3CallOptions, LanguageModelV3Usage } from '@ai-sdk/provider'
import type { ResolvedPolicy } from '@warmfold/compaction-basic/engine-parts'
import {
  MIN_SUMMARY_OUTPUT_TOKENS,
  resolveBudget,
  resolvePolicy,
  summaryLimit,
} from '@warmfold/compaction-basic/engine-parts'
import { applyFolds, leadingSystemMessages } from './apply-folds.ts'
import { BackgroundFoldTracker } from './background-fold-tracker.ts'
import { FoldFlights, unlessAborted } from './fold-flights.ts'
import { bodyValue } from './body-replay.ts'
import type { FoldInput, FoldOutcome } from './fold-prompt.ts'
import { foldPrompt } from './fold-prompt.ts'
import type { ParsedMiddlewareOptions } from './middleware-options.ts'
import { contextWindowFor } from './middleware-options.ts'
import type { FoldBackOff, RequestRelation } from './reports.ts'
import { refusedFold } from './reports.ts'
import type { SentRequest } from './sent-requests.ts'
import { describeRewrite, estimateCall, messageTokens, SentRequests } from './sent-requests.ts'
import { INSTRUCTION_MESSAGE } from './summary-calls.ts'

/**
 * The conversations of one middleware: what it sent (each call's lineage: which earlier request
 * it extends, without a conversation id), the recorded folds it re-applies, and the folds it
 * makes, on the call's path at the threshold or beside the conversation from the soft threshold.
 */
export class Conversations {
  private readonly sent = new SentRequests()
  /** The request each call became, until the provider answers it. */
  private readonly pending = new WeakMap<LanguageModelV3CallOptions, SentRequest>()
  private readonly flights = new FoldFlights()
  private readonly background?: BackgroundFoldTracker

  constructor(private readonly options: ParsedMiddlewareOptions) {
    if (options.background) this.background = new BackgroundFoldTracker(options.background)
  }

  /**
   * The call as the inner model gets it: recorded folds applied, folded now when it reaches the
   * threshold (unless `fold` is false or a refused fold backs off), and a background fold started
   * beside it from the soft threshold. A call at the threshold whose conversation has a fold in
   * flight waits for that fold and takes its checkpoint (or its back-off) instead of folding again.
   */
  async prepare(
    type: 'generate' | 'stream',
    params: LanguageModelV3CallOptions,
    model: LanguageModelV3,
    fold: boolean,
  ): Promise<LanguageModelV3CallOptions> {
    const { options, sent } = this
    const window = contextWindowFor(options, model.provider, model.modelId)
    const policy = resolvePolicy(options.policy, model.provider, model.modelId)
    const budget = resolveBudget(policy, window, params.maxOutputTokens ?? 0, `${model.provider}/${model.modelId}`)
    const view = async () => {
      const { prompt, applied } = applyFolds(params.prompt, await options.store.load())
      const call: LanguageModelV3CallOptions = applied.length > 0 ? { ...params, prompt } : params
      const described = sent.describe(model.provider, model.modelId, call)
      const kept = leadingSystemMessages(call.prompt)
      const lineage = sent.lineage(described, kept)
      return { call, applied, kept, described, lineage, estimated: estimateCall(call, lineage) }
    }
    let current = await view()
    const flight = this.flights.find(current.described.digests)
    let shared: FoldOutcome | undefined
    if (flight && current.estimated >= budget.thresholdTokens) {
      // A background fold is waited for up to maxWaitMs; another call's fold (a branch beside this one) to its end.
      const signal = params.abortSignal
      if (flight.trigger === 'background') await unlessAborted(this.background!.wait(flight), signal)
      else shared = await unlessAborted(flight.settled, signal)
      current = await view()
    }
    let { call, described, estimated } = current
    const { applied, kept, lineage } = current
    let relation: RequestRelation = lineage.relation
    // A background fold's or a sibling's checkpoint lands here: this call is the logged rewrite.
    const sharedRecord = shared && 'record' in shared ? shared.record : undefined
    const landed = this.background?.landed(applied) || (!!sharedRecord && applied.includes(sharedRecord))
    if (landed && relation !== 'extends') relation = 'fold'
    const previous = lineage.relation === 'extends' ? lineage.previous : undefined
    let backOff = previous?.backOff !== undefined && previous.backOff > 0
    if (backOff && hasNewUserMessage(call, previous!.params.prompt.length)) backOff = false
    // A failed summary call's back-off ends at the last call whose fold still fits: the next call's
    // summary would replay this call's prompt, and that would leave no room for a checkpoint.
    if (backOff && previous!.backOff !== Number.POSITIVE_INFINITY && lastChance(estimated, window, policy))
      backOff = false
    // A sibling's refusal is this call's too: the same summary request would be refused again.
    let refused: FoldBackOff | undefined = shared && 'backOff' in shared && !shared.aborted ? shared.backOff : undefined
    const input: Omit<FoldInput, 'trigger' | 'call'> = {
      type,
      model,
      lineage,
      kept,
      applied,
      estimated,
      window,
      policy,
      budget,
      chars: (request) => sent.fingerprint(model.provider, model.modelId, request).chars,
    }
    const replayed = lineage.relation === 'extends' ? lineage.previous!.digests : described.digests
    if (estimated >= budget.thresholdTokens && fold && !backOff && !refused) {
      const work = foldPrompt(options, { ...input, call, trigger: 'pressure' })
      this.flights.track(replayed, 'pressure', work)
      const outcome = await work
      if ('record' in outcome) {
        call = outcome.call
        described = sent.describe(model.provider, model.modelId, call)
        relation = 'fold'
        estimated = outcome.tokensAfter
      } else refused = outcome.backOff
    } else if (
      this.background?.mayStart(estimated, budget.thresholdTokens, described.digests) &&
      lineage.relation === 'extends' &&
      !flight &&
      fold &&
      !backOff
    ) {
      const started = call
      this.background.start(
        this.flights,
        replayed,
        described.digests,
        () => foldPrompt(options, { ...input, call: started, trigger: 'background' }),
        (error) => this.backgroundFailed(error, estimated),
      )
    }
    const request: SentRequest = {
      type,
      params: call,
      ...described,
      estimatedTokens: estimated,
      relation,
      ...(relation === 'host-rewrite' && lineage.divergence ? { divergence: lineage.divergence } : {}),
      ...backOffAfter(refused, backOff ? previous!.backOff : undefined),
    }
    sent.add(request)
    this.pending.set(call, request)
    return call
  }

  /** The provider answered `call` (the options `prepare` returned): its usage and body, reported. */
  answered(call: LanguageModelV3CallOptions, usage: LanguageModelV3Usage | undefined, body: unknown): void {
    const request = this.pending.get(call)
    if (!request) return
    request.usage = usage
    request.body = bodyValue(body)
    const divergence = request.divergence
    const description = divergence && `the host rewrote its history: ${describeRewrite(divergence)}`
    this.options.onCacheReport?.({
      kind: 'conversation',
      relation: request.relation,
      ...(divergence ? { divergence, description } : {}),
      estimatedTokens: request.estimatedTokens,
      ...(usage ? { usage } : {}),
      ...(body === undefined ? {} : { requestBody: request.body }),
    })
  }

  /** Whether `call` is one `prepare` returned and the provider has not answered yet. */
  expects(call: LanguageModelV3CallOptions): boolean {
    return this.pending.has(call)
  }

  private backgroundFailed(error: unknown, estimated: number): void {
    const why = error instanceof Error ? error.message : String(error)
    this.options.onFold?.(refusedFold('background', `the background fold failed: ${why}`, estimated))
  }
}

/** Whether a user message (not a tool result) arrived after the first `since` messages. */
function hasNewUserMessage(call: LanguageModelV3CallOptions, since: number): boolean {
  return call.prompt.slice(since).some((message) => message.role === 'user')
}

/**
 * The back-off a request leaves its conversation: a refusal made now starts one (a failed summary
 * call for its number of calls, a refused fold until the next user message), else a back-off in
 * force counts this call.
 */
function backOffAfter(refused: FoldBackOff | undefined, inForce: number | undefined): Pick<SentRequest, 'backOff'> {
  if (refused) return { backOff: refused.kind === 'failed' ? refused.calls : Number.POSITIVE_INFINITY }
  return inForce === undefined ? {} : { backOff: inForce - 1 }
}

/** Whether a summary call replaying a prompt of `estimated` tokens would leave no room for a checkpoint. */
function lastChance(estimated: number, window: number, policy: ResolvedPolicy): boolean {
  const room = summaryLimit(window, policy.summaryMarginRatio) - estimated - messageTokens(INSTRUCTION_MESSAGE)
  return room < MIN_SUMMARY_OUTPUT_TOKENS
}
