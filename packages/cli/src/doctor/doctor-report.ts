/** The request APIs `warmfold doctor` reads. */
export type RequestApi = 'openai-chat' | 'openai-responses' | 'anthropic-messages' | 'gemini'

/** Every API `warmfold doctor` reads, in the order the docs list them. */
export const REQUEST_APIS: readonly RequestApi[] = ['openai-chat', 'openai-responses', 'anthropic-messages', 'gemini']

/** A part of a request that can differ from an earlier request. */
export type DoctorChange = `envelope:${string}` | 'system' | 'tools' | 'messages'

/**
 * Where a request first differs from its best-matching earlier request. The canonical prompt is
 * tools, then system, then messages; `charOffset` counts its characters before the first
 * difference.
 */
export interface DoctorDivergence {
  /**
   * `first`: nothing earlier to compare with; `none`: the whole prompt was sent before (same
   * cache family); `envelope`: the best match is in another cache family (`field` is the first
   * prompt-shaping setting that differs, and nothing of the prompt can be reused across
   * families); `tools`, `system`, `messages`: the first differing character is in that part.
   */
  readonly part: 'first' | 'none' | 'envelope' | 'tools' | 'system' | 'messages'
  /** For `envelope`: the canonical name of the setting, e.g. `reasoningEffort`, `model`. */
  readonly field?: string
  /** For `tools`: index of the first differing tool in this request (= the earlier request's tool count when tools were only removed at the end). */
  readonly toolIndex?: number
  /** For `messages`: the message's index in the body's own list (`messages`, `input` or `contents`). */
  readonly messageIndex?: number
  /** For `messages`: the message's role (for Responses items without a role: the item's `type`). */
  readonly role?: string
  /** Characters of canonical prompt before the first difference (absent for `first` and `envelope`). */
  readonly charOffset?: number
}

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
export interface DoctorBreak {
  readonly index: number
  readonly api: RequestApi
  readonly promptChars: number
  readonly uncachedChars: number
  readonly bestMatch: number | null
  readonly divergence: DoctorDivergence
  readonly changes: readonly DoctorChange[]
}

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
