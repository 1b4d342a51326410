import type { LanguageModelV3, LanguageModelV3CallOptions, LanguageModelV3Usage } from '@ai-sdk/provider'
import { resolveBudget, resolvePolicy } from '@warmfold/compaction-basic/engine-parts'
import { applyFolds, leadingSystemMessages } from './apply-folds.ts'
import { BackgroundFoldTracker } from './background-fold-tracker.ts'
import { bodyValue } from './body-replay.ts'
import type { FoldInput } from './fold-prompt.ts'
import { foldPrompt } from './fold-prompt.ts'
import type { ParsedMiddlewareOptions } from './middleware-options.ts'
import { contextWindowFor } from './middleware-options.ts'
import type { RequestRelation } from './reports.ts'
import { refusedFold } from './reports.ts'
import type { SentRequest } from './sent-requests.ts'
import { describeRewrite, estimateCall, SentRequests } from './sent-requests.ts'

/**
 * The conversations of one middleware: what it sent (each call's lineage: which earlier request
 * it extends, without a conversation id), the recorded folds it re-applies, and the folds it
 * makes, on the call's path at the threshold or beside the conversation from the soft threshold.
 */
export class Conversations {
  private readonly sent = new SentRequests()
  /** The request each call became, until the provider answers it. */
  private readonly pending = new WeakMap<LanguageModelV3CallOptions, SentRequest>()
  private readonly background?: BackgroundFoldTracker

  constructor(private readonly options: ParsedMiddlewareOptions) {
    if (options.background) this.background = new BackgroundFoldTracker(options.background)
  }

  /**
   * The call as the inner model gets it: recorded folds applied, folded now when it reaches the
   * threshold (unless `fold` is false or a refused fold backs off), and a background fold started
   * beside it from the soft threshold.
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
    // At the threshold, a background fold of this conversation still in flight is waited for before folding here.
    const waiting = this.background?.inFlight(current.described.digests)
    if (waiting && current.estimated >= budget.thresholdTokens) {
      await this.background!.wait(waiting)
      current = await view()
    }
    let { call, described, estimated } = current
    const { applied, kept, lineage } = current
    let relation: RequestRelation = lineage.relation
    // A background fold's checkpoint lands here: this call is the logged rewrite.
    if (this.background?.landed(applied) && relation !== 'extends') relation = 'fold'
    const previous = lineage.relation === 'extends' ? lineage.previous : undefined
    const backoff = !!previous?.backoff && !hasNewUserMessage(call, previous.params.prompt.length)
    let refused = false
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
    }
    if (estimated >= budget.thresholdTokens && fold && !backoff) {
      const folded = await foldPrompt(options, { ...input, call, trigger: 'pressure' })
      if (folded) {
        call = folded.call
        described = sent.describe(model.provider, model.modelId, call)
        relation = 'fold'
        estimated = folded.tokensAfter
      } else refused = true
    } else if (
      this.background?.mayStart(estimated, budget.thresholdTokens, described.digests) &&
      lineage.relation === 'extends' &&
      !waiting &&
      fold &&
      !backoff
    ) {
      const started = call
      this.background.start(
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
      backoff: refused || backoff,
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
