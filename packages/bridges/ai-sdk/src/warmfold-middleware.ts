import type { LanguageModelV3CallOptions, LanguageModelV3Middleware, LanguageModelV3StreamPart } from '@ai-sdk/provider'
import { Conversations } from './conversations.ts'
import type { WarmfoldMiddlewareOptions } from './middleware-options.ts'
import { parseMiddlewareOptions } from './middleware-options.ts'

/**
 * The `providerOptions` key the middleware reads (`{ warmfold: { fold: false } }` skips folding
 * for a call) and strips before the provider sees the call.
 */
export const PROVIDER_OPTIONS_KEY = 'warmfold'

/**
 * Cache-warm compaction for an AI SDK 6 host that keeps its own loop: wrap the model with
 * `wrapLanguageModel({ model, middleware: warmfoldMiddleware({ contextWindow }) })`.
 *
 * Before every call it re-applies the recorded folds to the prompt; when the call then reaches
 * the policy's threshold it folds: the summary request is the previous request of the same
 * conversation exactly as it was sent, plus one instruction message, through the inner model
 * (so it reads what that request cached), and the oldest balanced head of the history becomes one
 * checkpoint message, with the engine's artifact trail and audit. Every fold and every request is
 * reported (`onFold`, `onCacheReport`) with what the provider received and reported.
 * @throws TypeError naming the option when the options are invalid.
 */
export function warmfoldMiddleware(options?: WarmfoldMiddlewareOptions): LanguageModelV3Middleware {
  const conversations = new Conversations(parseMiddlewareOptions(options))
  return {
    specificationVersion: 'v3',
    transformParams: async ({ type, params, model }) => {
      const { fold, params: call } = stripOwnOptions(params)
      // Server-side state: the provider holds the history, the prompt is only what is new.
      if (hasPreviousResponseId(call)) return call
      return conversations.prepare(type, call, model, fold !== false)
    },
    wrapGenerate: async ({ doGenerate, params }) => {
      const result = await doGenerate()
      conversations.answered(params, result.usage, result.request?.body)
      return result
    },
    wrapStream: async ({ doStream, params }) => {
      const result = await doStream()
      if (!conversations.expects(params)) return result
      const body = result.request?.body
      const stream = result.stream.pipeThrough(
        new TransformStream<LanguageModelV3StreamPart, LanguageModelV3StreamPart>({
          transform(part, controller) {
            if (part.type === 'finish') conversations.answered(params, part.usage, body)
            controller.enqueue(part)
          },
        }),
      )
      return { ...result, stream }
    },
  }
}

function hasPreviousResponseId(params: LanguageModelV3CallOptions): boolean {
  return Object.values(params.providerOptions ?? {}).some(
    (options) =>
      options !== null &&
      typeof options === 'object' &&
      (options as Record<string, unknown>).previousResponseId != null,
  )
}

/** The call without the middleware's own provider options, and its `fold` option. */
function stripOwnOptions(params: LanguageModelV3CallOptions): { fold?: boolean; params: LanguageModelV3CallOptions } {
  const providerOptions = params.providerOptions
  if (!providerOptions || !(PROVIDER_OPTIONS_KEY in providerOptions)) return { params }
  const { [PROVIDER_OPTIONS_KEY]: own, ...others } = providerOptions
  const { providerOptions: _dropped, ...rest } = params
  const stripped = Object.keys(others).length > 0 ? { ...rest, providerOptions: others } : rest
  const fold = (own as Record<string, unknown> | undefined)?.fold
  if (fold !== undefined && typeof fold !== 'boolean')
    throw new TypeError(`providerOptions.${PROVIDER_OPTIONS_KEY}.fold must be a boolean, got ${JSON.stringify(fold)}`)
  return { ...(fold === undefined ? {} : { fold }), params: stripped }
}
