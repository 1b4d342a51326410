import type { RequestApi } from '@warmfold/cache-ledger/prefix'

/**
 * The seams between the proxy's three rooms: `forward/` (the HTTP path: route, forward byte for
 * byte, read the answer as it streams), `observe/` (sessions, cache analysis, the log, the live
 * page; always off the hot path) and `warm/` (recognise a foreign summary request and rewrite it).
 */

/** What a request path is, from its path alone. */
export type RouteKind = 'generate' | 'count-tokens' | 'models' | 'other'

/** How the proxy reads a request path. */
export interface RouteMatch {
  /** The wire API the path belongs to; undefined for a path no dialect claims (forwarded unread). */
  readonly api: RequestApi | undefined
  readonly kind: RouteKind
  /**
   * Whether the answer will stream, as far as the path tells (Gemini's `:streamGenerateContent`);
   * the other APIs say so in the body (`stream: true`), read by {@link InboundRequest.stream}.
   */
  readonly streamByPath: boolean
}

/** A request as the proxy received it. Never modified: a rewrite makes a new body. */
export interface InboundRequest {
  /** Numbered from 1 per proxy process. */
  readonly id: number
  /** When the last byte of the body arrived (ms since the epoch). */
  readonly receivedAt: number
  readonly method: string
  /** Path and query exactly as received. */
  readonly url: string
  readonly route: RouteMatch
  /** Header names and values exactly as received (`IncomingMessage.rawHeaders`). */
  readonly rawHeaders: readonly string[]
  /** Lower-case header name → value (repeated headers joined with `, `), for reading only. */
  readonly headers: Readonly<Record<string, string>>
  readonly body: Buffer
  /** Whether the client asked for a streamed answer (path or body). */
  readonly stream: boolean
}

/** Token usage as the provider reported it, in one shape for every API. */
export interface ProviderUsage {
  /** Every prompt token: read from the cache, written to it, or neither. */
  readonly inputTokens: number
  /** Prompt tokens read from the cache. */
  readonly cacheReadTokens: number
  /** Prompt tokens written to the cache (Anthropic; 0 where the API does not say). */
  readonly cacheWriteTokens: number
  readonly outputTokens: number
}

/** What the proxy learnt from an upstream answer while passing it on. */
export interface AnswerFacts {
  readonly status: number
  /** Whether it was a server-sent-event stream. */
  readonly streamed: boolean
  /** Undefined when the answer carried no usage (or could not be read: then `unreadable` says why). */
  readonly usage?: ProviderUsage
  /** `text`: text (or reasoning) only; `tool-call`: at least one tool call; `empty`; `unknown`: not read. */
  readonly content: 'text' | 'tool-call' | 'empty' | 'unknown'
  /** The provider's own cache-miss diagnosis, verbatim, when it sent one (Anthropic, OpenAI Responses). */
  readonly providerDiagnosis?: string
  /** The provider's id for the answer (`msg_…`, `resp_…`, `chatcmpl-…`). */
  readonly responseId?: string
  /** Why the answer could not be read (malformed JSON, cut stream); the bytes were still passed on. */
  readonly unreadable?: string
  /**
   * A rewrite's answer that showed no text within `maxHoldMs` / `maxHoldBytes` and so went on as it
   * came (no fail-open for it): why.
   */
  readonly holdReleased?: string
  /** Milliseconds from the request's arrival to the first answer byte sent on, and to the last. */
  readonly firstByteMs?: number
  readonly totalMs: number
}

/** Where warm summaries stand: `off` observes only, `dry-run` logs the rewrite it would make. */
export type WarmMode = 'off' | 'dry-run' | 'on'

/** A conversation request the proxy forwarded and remembers (bounded: TTL and LRU). */
export interface RememberedRequest {
  readonly request: InboundRequest
  readonly api: RequestApi
  /** The parsed body (never modified). */
  readonly json: Readonly<Record<string, unknown>>
  /** The session the observer put it in. */
  readonly sessionKey: string
}

/** What the warm room needs from the observer's memory of forwarded requests. */
export interface RequestMemory {
  /**
   * The remembered conversation request, of `api`, whose messages are the longest prefix of
   * `messagesOf(json)`'s messages but the last (the history a summary request repeats or
   * transcribes), forwarded within `ttlMs` of now; undefined when none is held. Messages are
   * compared as the prefix model canonicalizes them (a Chat or Responses system head is the
   * system, not a message: Qwen Code replaces it). When no remembered request is such a prefix,
   * the latest one of which `json`'s messages but the last are themselves a prefix (at least two
   * messages): Gemini CLI summarizes only the older ~70 % of its history. Gemini contents are
   * compared as `comparableGeminiContents` (exported by this package) makes them: function-call
   * and -response ids and thought signatures removed, which Gemini CLI's conversation path and
   * its compression call write differently (recorded with Gemini CLI 0.61.0).
   */
  lastConversationFor(api: RequestApi, json: Readonly<Record<string, unknown>>): RememberedRequest | undefined
  /**
   * The last conversation request of each session of `api` forwarded within `ttlMs` of now,
   * latest first. For a summary request whose history is a text transcript (opencode, pi): its
   * messages repeat none of the conversation's, so the warm room picks the one it transcribes.
   * Optional: a memory without it holds no history for transcript agents.
   */
  recentConversations?(api: RequestApi): readonly RememberedRequest[]
}

/** The decision the warm room makes for one generate request, before it is forwarded. */
export type WarmPlan =
  | { readonly action: 'forward'; readonly reason?: string; readonly summary?: SummaryRecognition }
  | {
      readonly action: 'rewrite'
      /** The body to send instead (the original is still forwarded in `dry-run`). */
      readonly body: Buffer
      readonly recognition: SummaryRecognition
      /** The conversation request it replays. */
      readonly replays: RememberedRequest
      /** A structural diff, original → rewritten, one line per change. */
      readonly diff: readonly string[]
    }

/** Why a request was taken for a foreign agent's summary request. */
export interface SummaryRecognition {
  /** The known agent whose markers matched (e.g. `codex`), or `structure` for shape alone. */
  readonly agent: string
  /** 0..1. */
  readonly confidence: number
  readonly reason: string
}

/** One request's whole passage through the proxy, handed to the observer after the answer ended. */
export interface Exchange {
  readonly request: InboundRequest
  /** What went upstream: the request's own body, or a rewrite. */
  readonly sent: Buffer
  readonly plan?: WarmPlan
  readonly answer: AnswerFacts
  /** Set when a rewritten request failed (status or a tool call) and the original was sent once. */
  readonly failOpen?: { readonly reason: string; readonly rewrittenAnswer: AnswerFacts }
}

/** The observer (`observe/`): always on, never on the hot path. */
export interface ExchangeObserver extends RequestMemory {
  /** Takes one finished exchange; returns at once (the analysis runs later, off the forward's path). */
  observe(exchange: Exchange): void
  /** The live page's HTML at `/_warmfold/` (server-rendered). */
  renderPage(): string
  /** The live state as JSON (sessions, requests, breaks, compactions), for `/_warmfold/state.json`. */
  snapshot(): unknown
  /** Finishes pending analysis and closes the log. */
  close(): Promise<void>
  /**
   * Optional: asked by the forward when the planner found no remembered conversation request for
   * a generate request of `api` (a summary request whose conversation request another replica
   * forwarded). Loads what a shared store holds; resolves true when it brought in any request not
   * held before (the planner is then asked once more), false otherwise. Never rejects.
   */
  recall?(api: RequestApi, json: Readonly<Record<string, unknown>>): Promise<boolean>
}

/** The warm room (`warm/`): decides, before forwarding, whether a generate request is a summary request to rewrite. */
export interface WarmPlanner {
  plan(request: InboundRequest, json: Readonly<Record<string, unknown>>, memory: RequestMemory): WarmPlan
}
