import type { FinishReason, Message, TokenUsage, ToolResultMessage } from '@warmfold/llm'
import type { RequestHeader, RequestHeaderReason } from './request-header.ts'

/**
 * The payload of every session event type. Packages add their own events by declaration
 * merging:
 *
 * ```ts
 * declare module '@warmfold/session' {
 *   interface SessionEventMap { 'compaction/start': { compactionId: string } }
 * }
 * ```
 *
 * Payloads must be plain JSON (they are stored as JSON lines and must reopen identically).
 */
export interface SessionEventMap {
  /** A user message, or a plugin-written user message such as a compaction checkpoint. */
  'user/message': { message: Message }
  /** A complete assistant reply with the usage the provider reported for it. */
  'assistant/message': {
    message: Message
    usage?: TokenUsage
    finishReason?: FinishReason
    turn?: number
    step?: number
  }
  /** The result of one tool call. `error` says why the call failed, when it did. */
  'tool/result': { message: ToolResultMessage; toolName?: string; error?: string; turn?: number; step?: number }
  /** The canonical request header changed (or was first set, or differs after a resume). */
  'request/header': { header: RequestHeader; reason: RequestHeaderReason }
}

/** Every known event type. */
export type SessionEventType = keyof SessionEventMap & string

/** Event types that carry a surface node (a message of the request). */
export type SurfaceEventType = 'user/message' | 'assistant/message' | 'tool/result'

/** Whether events of `type` carry a surface node. */
export function isSurfaceEventType(type: string): type is SurfaceEventType {
  return type === 'user/message' || type === 'assistant/message' || type === 'tool/result'
}

/**
 * How a surface event changes the surface.
 * - `append`: the event's message becomes the new last surface node.
 * - `replace`: the event's message replaces surface positions `start..end` (inclusive, 0-based
 *   indices into `surface.nodes`) with one node. `sourceEventSeqs` must cite every shadowed seq.
 *   The shadowed events stay in the log forever.
 *
 *   `keep` (optional) lists nodes of that run that are **not** shadowed: they stay on the
 *   surface, unchanged and in their order, right after the event's own node. A compaction
 *   checkpoint uses it to carry pinned messages verbatim past a fold. At least one node of the
 *   run must be shadowed; an intent without `keep` (or with an empty one) is stored without it.
 */
export type SurfaceIntent =
  | { readonly op: 'append' }
  | {
      readonly op: 'replace'
      readonly start: number
      readonly end: number
      readonly sourceEventSeqs: readonly number[]
      readonly keep?: readonly number[]
    }

/** One logged event. Frozen once logged. */
export interface SessionEvent<K extends SessionEventType = SessionEventType> {
  /** Position in the log, from 0, without gaps. */
  readonly seq: number
  readonly type: K
  readonly data: SessionEventMap[K]
  /** Present exactly on surface events. */
  readonly surface?: SurfaceIntent
  /** Milliseconds since the epoch when the event was appended (never part of a prompt). */
  readonly time: number
}

/** Any logged event, discriminated by `type`. */
export type AnySessionEvent = { [K in SessionEventType]: SessionEvent<K> }[SessionEventType]
