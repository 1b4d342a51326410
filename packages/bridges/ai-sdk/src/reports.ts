import type { LanguageModelV3Usage } from '@ai-sdk/provider'
import type { CompactionAuditData, SummaryAttempt } from '@warmfold/compaction'
import type { CacheDivergence } from '@warmfold/cache-ledger'

/**
 * How a request relates to the one it should extend:
 * `first` nothing sent before in this conversation; `extends` it appends to the previous
 * request (rule C1); `fold` it follows a fold the middleware made (a logged rewrite);
 * `host-rewrite` it shares only part of an earlier request's prefix and no fold explains it (the
 * host rewrote its history, e.g. with `pruneMessages`).
 */
export type RequestRelation = 'first' | 'extends' | 'fold' | 'host-rewrite'

/** The facts of one request the middleware sent, after the provider answered. */
export interface CacheReport {
  readonly kind: 'conversation' | 'summary'
  readonly relation: RequestRelation
  /**
   * For `host-rewrite` (and a summary that is not a replay): where the prompt first departs, as
   * the cache ledger names it.
   */
  readonly divergence?: CacheDivergence
  /** A sentence saying where and why, when the request breaks the prefix. */
  readonly description?: string
  /** The middleware's estimate of the prompt (tokens). */
  readonly estimatedTokens: number
  /** What the provider reported (absent fields stay undefined). */
  readonly usage?: LanguageModelV3Usage
  /** The provider's request body, as the AI SDK gave it. */
  readonly requestBody?: unknown
}

/**
 * Why a fold's summary call was cold: `first` no earlier request of the conversation to replay
 * (the first request was already over the threshold); `host-rewrite` the host rewrote its history
 * since the last request, so the call replays itself; `body-departs` the summary body is not the
 * previous body plus one instruction (`firstDifferingPath` says where); `provider` the body was a
 * replay but the provider read nothing, or clearly less than the previous request it replays
 * (the cache ledger's `provider` cause: evicted, routed elsewhere, expired).
 */
export type ColdCause = 'first' | 'host-rewrite' | 'body-departs' | 'provider'

/**
 * How an uncommitted `pressure` fold backs off. `failed`: the summary call failed (a provider
 * error that may pass, a broken stream, `summaryDeadlineMs`, an abort): the conversation's next
 * `calls` calls do not try to fold (`backOffCalls`), the one after does. `refused`: the model
 * answered without a usable summary, a provider refused the request for good (an error it calls
 * not retryable), or nothing could be folded: no fold is tried again until the next user message.
 * A new user message lifts either at once.
 */
export type FoldBackOff = { readonly kind: 'failed'; readonly calls: number } | { readonly kind: 'refused' }

/** One fold attempt. */
export interface FoldReport {
  /**
   * `true` when the checkpoint was committed: a `pressure` fold's request is sent folded; a
   * `background` fold's checkpoint applies from the next call that starts with the folded history.
   */
  readonly committed: boolean
  /**
   * `pressure`: the call reached the threshold and waited for the fold; `background`: started at
   * the soft threshold beside the conversation.
   */
  readonly trigger: 'pressure' | 'background'
  /** Why not, when `committed` is false. */
  readonly refusal?: string
  /**
   * The summary call read the previous request's cache: its body is the previous request's body
   * plus one appended instruction (output cap aside), and the provider's cache read is not a miss
   * by the cache ledger's rule (`providerMissed` of `@warmfold/cache-ledger/prefix`: short of the
   * previous request by more than `providerToleranceTokens` and 5 %), nor zero; a provider that
   * reports no cache reads at all is not blamed.
   */
  readonly warm: boolean
  /** Where the instruction was appended in the summary body (a replay). */
  readonly appendedAt?: string
  /** The first path where the summary body departs from the previous body (not a replay). */
  readonly firstDifferingPath?: string
  /** Why the summary call is not warm, in a sentence (a host rewrite, a changed setting, the provider's miss). */
  readonly coldReason?: string
  /** Why the summary call is not warm, as a word (see {@link ColdCause}); set whenever `coldReason` is. */
  readonly coldCause?: ColdCause
  /** Prompt messages folded into the checkpoint (system messages stay, not counted). */
  readonly foldedMessages: number
  /** Estimated tokens of the request before and after the fold. */
  readonly tokensBefore: number
  readonly tokensAfter: number
  /** The previous request's prompt tokens as its provider reported them (what a warm summary reads). */
  readonly previousPromptTokens?: number
  /** For an uncommitted `pressure` fold: how the conversation backs off before it tries again. */
  readonly backOff?: FoldBackOff
  /** The summary calls made (the engine's budget ladder). */
  readonly attempts: readonly SummaryAttempt[]
  /** Usage of the last summary call. */
  readonly usage?: LanguageModelV3Usage
  /** The summary text, when one was written (the model's: the checkpoint adds the artifact trail). */
  readonly summary?: string
  /**
   * The engine's model-free audit of a committed fold (what a warmfold host logs as
   * `compaction/audit`): the folded artifacts by class and whether each is still visible, the
   * summary's health and the artifact trail. Absent when the `audit` option disables it.
   */
  readonly audit?: CompactionAuditData
}

/** The report of a fold attempt that committed nothing, the request estimated at `estimated` tokens. */
export function refusedFold(
  trigger: FoldReport['trigger'],
  refusal: string,
  estimated: number,
  extra: Partial<FoldReport> = {},
): FoldReport {
  const unchanged = { foldedMessages: 0, tokensBefore: estimated, tokensAfter: estimated, attempts: [] }
  return { committed: false, trigger, refusal, warm: false, ...unchanged, ...extra }
}
