import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3Message,
  LanguageModelV3Middleware,
  LanguageModelV3StreamPart,
  LanguageModelV3Usage,
} from '@ai-sdk/provider'
import { balancedCuts } from '@warmfold/compaction'
import {
  frameCheckpoint,
  MIN_SUMMARY_OUTPUT_TOKENS,
  pricesWithin,
  resolveBudget,
  resolvePolicy,
  selectRegion,
  summaryLimit,
} from '@warmfold/compaction-basic/engine-parts'
import type { CacheDivergence } from '@warmfold/cache-ledger'
import { describeSummaryDivergence } from '@warmfold/cache-ledger'
import { bodyValue, compareBodies } from './body-replay.ts'
import { applyFolds, leadingSystemMessages } from './apply-folds.ts'
import { prefixDigests } from './prompt-digest.ts'
import type { FoldRecord } from './fold-store.ts'
import { memoryFoldStore } from './fold-store.ts'
import type { WarmfoldMiddlewareOptions } from './middleware-options.ts'
import { contextWindowFor, parseMiddlewareOptions } from './middleware-options.ts'
import type { FoldReport, RequestRelation } from './reports.ts'
import type { Lineage, SentRequest } from './sent-requests.ts'
import { messageTokens, SentRequests, toolTokens } from './sent-requests.ts'
import { INSTRUCTION_MESSAGE, summarizeThrough } from './summary-calls.ts'
import { warmfoldMessage } from './warmfold-view.ts'

/** The `providerOptions` key the middleware reads (`{ warmfold: { fold: false } }` skips folding for a call) and strips before the provider sees the call. */
export const PROVIDER_OPTIONS_KEY = 'warmfold'

/**
 * Cache-warm compaction for an AI SDK 6 host that keeps its own loop: wrap the model with
 * `wrapLanguageModel({ model, middleware: warmfoldMiddleware({ contextWindow }) })`.
 *
 * Before every call it re-applies the recorded folds to the prompt; when the call then reaches
 * the policy's threshold it folds: the summary request is the previous request of the same
 * conversation exactly as it was sent, plus one instruction message, through the inner model
 * (so it reads what that request cached), and the oldest balanced head of the history becomes one
 * checkpoint message. Every fold and every request is reported (`onFold`, `onCacheReport`) with
 * what the provider received and reported.
 * @throws TypeError naming the option when the options are invalid.
 */
export function warmfoldMiddleware(options?: WarmfoldMiddlewareOptions): LanguageModelV3Middleware {
  const parsed = parseMiddlewareOptions(options)
  const store = parsed.store ?? memoryFoldStore()
  const sent = new SentRequests()
  const pending = new WeakMap<LanguageModelV3CallOptions, SentRequest>()

  const report = (request: SentRequest, usage: LanguageModelV3Usage | undefined, body: unknown) => {
    request.usage = usage
    request.body = bodyValue(body)
    const divergence = request.divergence
    const description = divergence && `the host rewrote its history: ${describeRewrite(divergence)}`
    parsed.onCacheReport?.({
      kind: 'conversation',
      relation: request.relation,
      ...(divergence ? { divergence, description } : {}),
      estimatedTokens: request.estimatedTokens,
      ...(usage ? { usage } : {}),
      ...(body === undefined ? {} : { requestBody: request.body }),
    })
  }

  /** Background folds in flight, by the prompt they started from (later calls of that conversation start with it). */
  const inflight: Array<{ readonly digest: string; readonly length: number; readonly done: Promise<void> }> = []
  /** Records committed by background folds and not yet applied to a call. */
  const landing = new Set<FoldRecord>()
  /** Prompts whose background fold was refused: their conversation starts no other one until the threshold (where a fold is tried anyway). */
  const refusedBackground: Array<{ readonly digest: string; readonly length: number }> = []

  async function prepare(
    type: 'generate' | 'stream',
    incoming: LanguageModelV3CallOptions,
    model: LanguageModelV3,
  ): Promise<LanguageModelV3CallOptions> {
    const { own, params } = stripOwnOptions(incoming)
    // Server-side state: the provider holds the history, the prompt is only what is new.
    if (hasPreviousResponseId(params)) return params
    const window = contextWindowFor(parsed, model.provider, model.modelId)
    const policy = resolvePolicy(parsed.policy, model.provider, model.modelId)
    const budget = resolveBudget(policy, window, params.maxOutputTokens ?? 0, `${model.provider}/${model.modelId}`)
    const view = async () => {
      const { prompt, applied } = applyFolds(params.prompt, await store.load())
      const call: LanguageModelV3CallOptions = applied.length > 0 ? { ...params, prompt } : params
      const described = sent.describe(model.provider, model.modelId, call)
      const lineage = sent.lineage(
        described.familyKey,
        described.digests,
        described.fingerprint,
        leadingSystemMessages(call.prompt),
      )
      return { call, applied, described, lineage, estimated: estimate(call, lineage) }
    }
    let current = await view()
    // At the threshold, a background fold of this conversation still in flight is waited for (up to maxWaitMs) before folding here.
    const waiting = inflight.find((entry) => current.described.digests[entry.length] === entry.digest)
    if (waiting && parsed.background && current.estimated >= budget.thresholdTokens) {
      await Promise.race([waiting.done, delay(parsed.background.maxWaitMs)])
      current = await view()
    }
    let { call, described, lineage, estimated } = current
    const { applied } = current
    const kept = leadingSystemMessages(call.prompt)
    let relation: RequestRelation = lineage.relation
    // A background fold's checkpoint lands here: this call is the logged rewrite.
    const landed = applied.filter((record) => landing.delete(record))
    if (landed.length > 0 && relation !== 'extends') relation = 'fold'
    const backoff =
      lineage.relation === 'extends' &&
      (lineage.previous?.backoff ?? false) &&
      !hasNewUserMessage(call.prompt, lineage.previous!.params.prompt.length)
    let refused = false
    const input = { type, model, lineage, kept, applied, estimated, window, policy, budget }
    if (estimated >= budget.thresholdTokens && own.fold !== false && !backoff) {
      const folded = await fold({ ...input, call, trigger: 'pressure' })
      if (folded) {
        call = folded.call
        described = sent.describe(model.provider, model.modelId, call)
        lineage = { relation: 'fold' }
        relation = 'fold'
        estimated = folded.tokensAfter
      } else refused = true
    } else if (
      parsed.background &&
      estimated >= parsed.background.startRatio * budget.thresholdTokens &&
      lineage.relation === 'extends' &&
      !waiting &&
      own.fold !== false &&
      !backoff &&
      !refusedBackground.some((entry) => described.digests[entry.length] === entry.digest)
    ) {
      // Summarize the previous request beside the conversation; its record applies to the first
      // later call that still starts with the folded history.
      const entry = {
        digest: described.digests.at(-1) as string,
        length: described.digests.length - 1,
        done: Promise.resolve(),
      }
      entry.done = fold({ ...input, call, trigger: 'background' })
        .then(
          (folded) => {
            if (folded) landing.add(folded.record)
            // A refused summary would be refused again on the next step: one paid call per fold is enough.
            else refusedBackground.push({ digest: entry.digest, length: entry.length })
          },
          (error: unknown) =>
            parsed.onFold?.({
              committed: false,
              trigger: 'background',
              refusal: `the background fold failed: ${error instanceof Error ? error.message : String(error)}`,
              warm: false,
              foldedMessages: 0,
              tokensBefore: estimated,
              tokensAfter: estimated,
              attempts: [],
            }),
        )
        .finally(() => inflight.splice(inflight.indexOf(entry), 1))
      inflight.push(entry)
    }
    const request: SentRequest = {
      type,
      params: call,
      digests: described.digests,
      familyKey: described.familyKey,
      fingerprint: described.fingerprint,
      estimatedTokens: estimated,
      relation,
      ...(relation === 'host-rewrite' && lineage.divergence ? { divergence: lineage.divergence } : {}),
      backoff: refused || backoff,
    }
    sent.add(request)
    pending.set(call, request)
    return call
  }

  interface FoldInput {
    readonly trigger: 'pressure' | 'background'
    readonly type: 'generate' | 'stream'
    readonly call: LanguageModelV3CallOptions
    readonly model: LanguageModelV3
    readonly lineage: Lineage
    readonly kept: number
    readonly applied: readonly FoldRecord[]
    readonly estimated: number
    readonly window: number
    readonly policy: ReturnType<typeof resolvePolicy>
    readonly budget: ReturnType<typeof resolveBudget>
  }

  async function fold(
    input: FoldInput,
  ): Promise<{ call: LanguageModelV3CallOptions; tokensAfter: number; record: FoldRecord } | undefined> {
    const { call, lineage, kept, policy, window } = input
    // The summary replays the previous request of this conversation as it was sent, so it reads
    // that request's cache; with none (the first call is already over the threshold, or the host
    // rewrote its history), the call itself is replayed, and the fold is reported cold.
    const base = lineage.relation === 'extends' ? lineage.previous : undefined
    const replay = base?.params ?? call
    const type = base?.type ?? input.type
    const refuse = (refusal: string, extra: Partial<FoldReport> = {}) => {
      parsed.onFold?.({
        committed: false,
        trigger: input.trigger,
        refusal,
        warm: false,
        foldedMessages: 0,
        tokensBefore: input.estimated,
        tokensAfter: input.estimated,
        attempts: [],
        ...extra,
      })
      return undefined
    }
    const rest = call.prompt.slice(kept)
    const prices = rest.map(messageTokens)
    // The region lies inside the replayed request and before the latest assistant turn that
    // carries reasoning with provider metadata (its signature must reach the provider unchanged).
    const limit = Math.min(replay.prompt.length, protectedFrom(call.prompt)) - kept
    const region = selectRegion(prices, balancedCuts(rest.map(warmfoldMessage)), input.budget.retainTokens, {
      prices: pricesWithin(prices, limit),
      maxTokens: Number.MAX_SAFE_INTEGER,
    })
    if (!region)
      return refuse('no balanced head region is left to summarize: the retained tail alone fills the request')
    if (region.end === 0 && input.applied.some((record) => record.checkpoint === rest[0]))
      return refuse('the only foldable message is the previous checkpoint')
    const replayTokens = base?.usage?.inputTokens.total ?? estimate(replay, { relation: 'first' })
    const promptTokens = replayTokens + messageTokens(INSTRUCTION_MESSAGE)
    const room = summaryLimit(window, policy.summaryMarginRatio) - promptTokens
    if (room < MIN_SUMMARY_OUTPUT_TOKENS)
      return refuse(
        `the summary prompt (about ${promptTokens} tokens) leaves ${Math.max(0, room)} tokens for the checkpoint; at least ${MIN_SUMMARY_OUTPUT_TOKENS} are needed`,
      )
    // The abort signal is the current call's: the replayed request's own may belong to a finished step.
    const { abortSignal: _replayed, ...replayed } = replay
    const summaryRequest: LanguageModelV3CallOptions = {
      ...replayed,
      prompt: [...replay.prompt, INSTRUCTION_MESSAGE],
      maxOutputTokens: Math.min(policy.maxTokens, room),
      ...(call.abortSignal ? { abortSignal: call.abortSignal } : {}),
    }
    const coldReason = base
      ? undefined
      : lineage.relation === 'host-rewrite' && lineage.divergence
        ? `the host rewrote its history since the last request: ${describeRewrite(lineage.divergence)}`
        : 'no earlier request of this conversation to replay: the request was already above the threshold'
    const outcome = await summarizeThrough(
      input.model,
      type,
      summaryRequest,
      { ...policy.summaryBudget, ceilingTokens: room, deadlineMs: policy.summaryDeadlineMs },
      (summaryCall) =>
        parsed.onCacheReport?.({
          kind: 'summary',
          relation: base ? 'extends' : lineage.relation,
          estimatedTokens: promptTokens,
          ...(summaryCall.usage ? { usage: summaryCall.usage } : {}),
          ...(summaryCall.requestBody === undefined ? {} : { requestBody: bodyValue(summaryCall.requestBody) }),
        }),
    )
    const first = outcome.calls[0]
    const bodies = base && first ? compareBodies(base.body, bodyValue(first.requestBody)) : undefined
    const cacheRead = first?.usage?.inputTokens.cacheRead
    const warm = !!bodies?.replay && cacheRead !== 0
    const verdict: Pick<FoldReport, 'warm' | 'attempts'> & Partial<FoldReport> = {
      warm,
      ...(bodies?.appendedAt ? { appendedAt: bodies.appendedAt } : {}),
      ...(bodies?.firstDifferingPath ? { firstDifferingPath: bodies.firstDifferingPath } : {}),
      ...(coldReason
        ? { coldReason }
        : bodies && !bodies.replay
          ? { coldReason: `the summary body departs from the previous request's body at ${bodies.firstDifferingPath}` }
          : cacheRead === 0
            ? { coldReason: 'the provider reported no cache read for the summary call' }
            : {}),
      ...(base?.usage?.inputTokens.total === undefined ? {} : { previousPromptTokens: base.usage.inputTokens.total }),
      attempts: outcome.attempts,
      ...(outcome.calls.at(-1)?.usage ? { usage: outcome.calls.at(-1)!.usage } : {}),
    }
    if ('refusal' in outcome) return refuse(`${outcome.refusal}; no checkpoint was committed`, verdict)
    const checkpoint: LanguageModelV3Message = {
      role: 'user',
      content: [{ type: 'text', text: frameCheckpoint(outcome.summary) }],
    }
    const prefixLength = region.end + 1
    const record: FoldRecord = Object.freeze({
      prefixDigest: prefixDigests(rest.slice(0, prefixLength)).at(-1) as string,
      prefixLength,
      checkpoint,
      createdAt: Date.now(),
    })
    await store.append(record)
    const folded = { ...call, prompt: [...call.prompt.slice(0, kept), checkpoint, ...rest.slice(prefixLength)] }
    const tokensAfter = estimate(folded, { relation: 'first' })
    parsed.onFold?.({
      committed: true,
      trigger: input.trigger,
      foldedMessages: region.end + 1,
      tokensBefore: input.estimated,
      tokensAfter,
      summary: outcome.summary,
      ...verdict,
      warm,
    })
    return { call: folded, tokensAfter, record }
  }

  return {
    specificationVersion: 'v3',
    transformParams: ({ type, params, model }) => prepare(type, params, model),
    wrapGenerate: async ({ doGenerate, params }) => {
      const result = await doGenerate()
      const request = pending.get(params)
      if (request) report(request, result.usage, result.request?.body)
      return result
    },
    wrapStream: async ({ doStream, params }) => {
      const result = await doStream()
      const request = pending.get(params)
      if (!request) return result
      const body = result.request?.body
      const stream = result.stream.pipeThrough(
        new TransformStream<LanguageModelV3StreamPart, LanguageModelV3StreamPart>({
          transform(part, controller) {
            if (part.type === 'finish') report(request, part.usage, body)
            controller.enqueue(part)
          },
        }),
      )
      return { ...result, stream }
    },
  }
}

/** Resolves after `milliseconds` without keeping the process alive. */
function delay(milliseconds: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, milliseconds).unref())
}

/** Where a rewritten prompt departs, in the cache ledger's words. */
function describeRewrite(divergence: CacheDivergence): string {
  return describeSummaryDivergence({ divergence, sharedChars: divergence.charOffset ?? 0 }, 'unknown')
    .replace(/^the summary call's /, "the request's ")
    .replace("the last conversation request's", "the previous request's")
}

/** Estimated prompt tokens: the provider's count of the request it extends plus the new messages, else the heuristic over everything. */
function estimate(call: LanguageModelV3CallOptions, lineage: Pick<Lineage, 'relation' | 'previous'>): number {
  const anchor = lineage.relation === 'extends' ? lineage.previous : undefined
  const reported = anchor?.usage?.inputTokens.total
  if (anchor && reported !== undefined)
    return (
      reported +
      call.prompt.slice(anchor.params.prompt.length).reduce((sum, message) => sum + messageTokens(message), 0)
    )
  return toolTokens(call) + call.prompt.reduce((sum, message) => sum + messageTokens(message), 0)
}

/** Index of the latest assistant message with reasoning that carries provider options (never folded), else the prompt's length. */
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

/** Whether a user message (not a tool result) arrived after the first `since` messages. */
function hasNewUserMessage(prompt: readonly LanguageModelV3Message[], since: number): boolean {
  return prompt.slice(since).some((message) => message.role === 'user')
}

function hasPreviousResponseId(params: LanguageModelV3CallOptions): boolean {
  return Object.values(params.providerOptions ?? {}).some(
    (options) =>
      options !== null &&
      typeof options === 'object' &&
      (options as Record<string, unknown>).previousResponseId != null,
  )
}

/** The call without the middleware's own provider options, and those options. */
function stripOwnOptions(params: LanguageModelV3CallOptions): {
  own: { fold?: boolean }
  params: LanguageModelV3CallOptions
} {
  const providerOptions = params.providerOptions
  if (!providerOptions || !(PROVIDER_OPTIONS_KEY in providerOptions)) return { own: {}, params }
  const { [PROVIDER_OPTIONS_KEY]: own, ...others } = providerOptions
  const { providerOptions: _dropped, ...rest } = params
  const stripped = Object.keys(others).length > 0 ? { ...rest, providerOptions: others } : rest
  const fold = (own as Record<string, unknown> | undefined)?.fold
  if (fold !== undefined && typeof fold !== 'boolean')
    throw new TypeError(`providerOptions.${PROVIDER_OPTIONS_KEY}.fold must be a boolean, got ${JSON.stringify(fold)}`)
  return { own: fold === undefined ? {} : { fold }, params: stripped }
}
