import type { CanonicalRequest, RequestApi, WireRequest } from './canonical-request.ts'
import { canonicalizeAnthropic } from './canonicalize-anthropic.ts'
import { canonicalizeGemini } from './canonicalize-gemini.ts'
import { canonicalizeOpenAiChat } from './canonicalize-openai-chat.ts'
import { canonicalizeOpenAiResponses } from './canonicalize-openai-responses.ts'

/**
 * The canonical form of `request` as `api` reads it (see {@link detectApi} to tell the API).
 * @throws RequestShapeError when the body does not have the shape of its API.
 */
export function canonicalize(request: WireRequest, api: RequestApi): CanonicalRequest {
  switch (api) {
    case 'openai-chat':
      return canonicalizeOpenAiChat(request.body)
    case 'openai-responses':
      return canonicalizeOpenAiResponses(request.body)
    case 'anthropic-messages':
      return canonicalizeAnthropic(request.body, request.headers)
    case 'gemini':
      return canonicalizeGemini(request.body, request.url)
  }
}
