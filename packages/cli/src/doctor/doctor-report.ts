import type { PromptChange, PromptDivergence, RequestApi } from '@warmfold/cache-ledger/prefix'

/** The request APIs `warmfold doctor` reads, and every one of them in the order the docs list them. */
export type { RequestApi } from '@warmfold/cache-ledger/prefix'
export { REQUEST_APIS } from '@warmfold/cache-ledger/prefix'

/** A part of a request that can differ from an earlier request. */
export type DoctorChange = PromptChange

/** Where a request first differs from its best-matching earlier request (see `PromptDivergence`). */
export type DoctorDivergence = PromptDivergence

/** The diagnosis of one request line. */
export interface DoctorRequest {
  /** 1-based line number in the log. */
  readonly index: number
  readonly api: RequestApi
  /** The model the body (or, for Gemini, the URL) names; null when neither does. */
  readonly model: string | null
  /** Characters of the canonical prompt (tools, system, messages). */
  readonly promptChars: number
  /** Longest prefix shared with any earlier request of the same cache family: what a prefix cache could reuse. */
  readonly cachedChars: number
  /** `promptChars - cachedChars`. */
  readonly uncachedChars: number
  /** Line of the earlier request this one is compared with, or null when there is none. */
  readonly bestMatch: number | null
  readonly divergence: DoctorDivergence
  /**
   * Every part that differs from `bestMatch`: `envelope:<field>` per prompt-shaping setting,
   * `system`, `tools`, and `messages` when an earlier message was changed or removed (appending
   * messages, or a different last message, is not a change). Empty for a warm request.
   */
  readonly changes: readonly DoctorChange[]
  /** Milliseconds since `bestMatch` was sent, when both lines carry `t`. */
  readonly idleMs?: number
}

/** A request whose prefix broke: it changed a part of its best match, so more than its new tail was prefilled. */
export type DoctorBreak = Pick<
  DoctorRequest,
  'index' | 'api' | 'promptChars' | 'uncachedChars' | 'bestMatch' | 'divergence' | 'changes'
>

/** A line that holds no request the doctor can read; it is reported, never dropped silently. */
export interface UnreadableLine {
  /** 1-based line number. */
  readonly index: number
  /** What is wrong with it. */
  readonly reason: string
}

/** Sums over every readable request. */
export interface DoctorTotals {
  readonly requests: number
  readonly promptChars: number
  readonly cachedChars: number
  readonly uncachedChars: number
  readonly breaks: number
}

/** The `warmfold doctor --json` document. */
export interface DoctorReport {
  readonly version: 1
  /** One entry per readable line, in log order. */
  readonly requests: readonly DoctorRequest[]
  /** Requests with a non-empty `changes`, most uncached characters first. */
  readonly breaks: readonly DoctorBreak[]
  readonly unreadable: readonly UnreadableLine[]
  readonly totals: DoctorTotals
}
