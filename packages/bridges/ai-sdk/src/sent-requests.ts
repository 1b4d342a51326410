import type { LanguageModelV3CallOptions, LanguageModelV3Usage } from '@ai-sdk/provider'
import type { CacheDivergence, RequestFingerprint } from '@warmfold/cache-ledger/prefix'
import { compareRequests, describeSummaryDivergence, Fingerprinter, prefixDigests } from '@warmfold/cache-ledger/prefix'
import { canonicalJson } from '@warmfold/llm'
import { estimateMessageTokens, estimateToolsTokens } from '@warmfold/token-meter'
import type { RequestRelation } from './reports.ts'
import { warmfoldMessage, warmfoldRequest, warmfoldTools } from './warmfold-view.ts'

/** One request the middleware let through to the provider. */
export interface SentRequest {
  readonly type: 'generate' | 'stream'
  /** The call options exactly as the inner model got them. */
  readonly params: LanguageModelV3CallOptions
  readonly digests: readonly string[]
  /** The cache family and tools: requests of two families never extend one another. */
  readonly familyKey: string
  readonly fingerprint: RequestFingerprint
  readonly estimatedTokens: number
  readonly relation: RequestRelation
  /** For `host-rewrite`: where the prompt departs from the request it rewrote. */
  readonly divergence?: CacheDivergence
  /**
   * Later calls of this conversation that do not try to fold (a fold failed or was refused, see
   * `FoldBackOff`; infinite: until the next user message, which lifts any back-off).
   */
  readonly backOff?: number
  usage?: LanguageModelV3Usage
  body?: unknown
}

/** How a new call relates to what was sent before. */
export interface Lineage {
  readonly relation: RequestRelation
  /** The request the call extends (for `extends`), or the one it departs from (for `host-rewrite`). */
  readonly previous?: SentRequest
  readonly divergence?: CacheDivergence
}

/** Requests remembered per middleware: enough for several conversations interleaving. */
const REMEMBERED = 64

/**
 * Estimated tokens of one prompt message: the token meter's estimate of warmfold's view of it
 * (text, blocks, role overhead).
 */
export function messageTokens(message: LanguageModelV3CallOptions['prompt'][number]): number {
  return estimateMessageTokens(warmfoldMessage(message))
}

/** Estimated prompt tokens of `params` by the heuristic over everything: tools and every message. */
export function estimatePrompt(params: LanguageModelV3CallOptions): number {
  const tools = estimateToolsTokens(warmfoldTools(params.tools))
  return tools + params.prompt.reduce((sum, message) => sum + messageTokens(message), 0)
}

/**
 * Estimated prompt tokens of a call: the provider's count of the request it extends plus the
 * new messages, else {@link estimatePrompt}.
 */
export function estimateCall(params: LanguageModelV3CallOptions, lineage: Lineage): number {
  const anchor = lineage.relation === 'extends' ? lineage.previous : undefined
  const reported = anchor?.usage?.inputTokens.total
  if (!anchor || reported === undefined) return estimatePrompt(params)
  const added = params.prompt.slice(anchor.params.prompt.length)
  return reported + added.reduce((sum, message) => sum + messageTokens(message), 0)
}

/** Where a rewritten prompt departs, in the cache ledger's words. */
export function describeRewrite(divergence: CacheDivergence): string {
  return describeSummaryDivergence({ divergence, sharedChars: divergence.charOffset ?? 0 }, 'unknown')
    .replace(/^the summary call's /, "the request's ")
    .replace("the last conversation request's", "the previous request's")
}

/**
 * The requests the middleware sent, newest last, and the conversation a new call belongs to: the
 * newest earlier request of the same family whose whole prompt the call starts with. No
 * conversation id is needed, so hosts that run several agents through one model keep them apart.
 */
export class SentRequests {
  private readonly requests: SentRequest[] = []
  private readonly fingerprinter = new Fingerprinter(canonicalJson)

  /** Fingerprint, family and prefix digests of `params` for `provider`/`modelId`. */
  describe(
    provider: string,
    modelId: string,
    params: LanguageModelV3CallOptions,
  ): Pick<SentRequest, 'fingerprint' | 'familyKey' | 'digests'> {
    const fingerprint = this.fingerprint(provider, modelId, params)
    const tools = fingerprint.segments
      .slice(0, fingerprint.tools)
      .map((segment) => segment.hash)
      .join('.')
    return { fingerprint, familyKey: `${fingerprint.family}|${tools}`, digests: prefixDigests(params.prompt) }
  }

  /** The fingerprint of `params` for `provider`/`modelId` alone. */
  fingerprint(provider: string, modelId: string, params: LanguageModelV3CallOptions): RequestFingerprint {
    return this.fingerprinter.fingerprint(warmfoldRequest(provider, modelId, params))
  }

  /** Where a call so described stands against what was sent. */
  lineage(
    { familyKey, digests, fingerprint }: Pick<SentRequest, 'fingerprint' | 'familyKey' | 'digests'>,
    keptMessages: number,
  ): Lineage {
    // The request sharing the longest prefix, the newest on a tie: a rewritten history still
    // starts with every request made before the rewritten message, so "starts with some earlier
    // request" alone would call a rewrite an extension.
    let best: { request: SentRequest; shared: number } | undefined
    for (let index = this.requests.length - 1; index >= 0; index--) {
      const request = this.requests[index] as SentRequest
      if (request.familyKey !== familyKey) continue
      const length = request.digests.length - 1
      let shared = Math.min(length, digests.length - 1)
      while (shared > 0 && digests[shared] !== request.digests[shared]) shared--
      if (!best || shared > best.shared) best = { request, shared }
    }
    if (!best || best.shared <= keptMessages) return { relation: 'first' }
    if (best.shared === best.request.digests.length - 1) return { relation: 'extends', previous: best.request }
    const comparison = compareRequests(best.request.fingerprint, fingerprint, false)
    return { relation: 'host-rewrite', previous: best.request, divergence: comparison.divergence }
  }

  /** Remembers a request about to be sent. */
  add(request: SentRequest): void {
    this.requests.push(request)
    if (this.requests.length > REMEMBERED) this.requests.shift()
  }
}
