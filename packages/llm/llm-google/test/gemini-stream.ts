import type { Reply, SseItem } from '@warmfold/test-utils'

/** One part of a canned reply, as Gemini streams it. */
export type ScriptPart =
  | { readonly text: string; readonly thought?: true; readonly thoughtSignature?: string }
  | {
      readonly functionCall: { readonly name: string; readonly args: Record<string, unknown>; readonly id?: string }
      readonly thoughtSignature?: string
    }

/** A canned reply: its parts, finish reason and final `usageMetadata`. */
export interface ScriptReply {
  readonly parts: readonly ScriptPart[]
  /** Default `STOP`; `null` sends no finish reason (a stream cut before its end). */
  readonly finishReason?: string | null
  /** The final usage; default `{ promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 }`. */
  readonly usage?: Record<string, unknown>
  readonly modelVersion?: string
}

const DEFAULT_USAGE = { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 }

/**
 * The SSE `data:` items of a reply, shaped like `streamGenerateContent?alt=sse`: one
 * `GenerateContentResponse` per part (a text part split in two chunks), each with the running
 * `usageMetadata` (prompt count only until the last chunk), the last one with `finishReason` and
 * the full usage. No `[DONE]` follows (send with `done: false`).
 */
export function geminiChunks(reply: ScriptReply): SseItem[] {
  const usage = reply.usage ?? DEFAULT_USAGE
  const running = { promptTokenCount: usage.promptTokenCount, totalTokenCount: usage.promptTokenCount }
  const chunk = (parts: unknown[], last: boolean) => ({
    candidates: [
      {
        content: { parts, role: 'model' },
        ...(last && reply.finishReason !== null ? { finishReason: reply.finishReason ?? 'STOP' } : {}),
        index: 0,
      },
    ],
    usageMetadata: last ? usage : running,
    modelVersion: reply.modelVersion ?? 'gemini-test',
    responseId: 'resp-test',
  })
  const pieces: unknown[][] = []
  for (const part of reply.parts) {
    if ('text' in part && part.text.length > 1) {
      const middle = Math.ceil(part.text.length / 2)
      const { thoughtSignature, ...rest } = part
      pieces.push(
        [{ ...rest, text: part.text.slice(0, middle) }],
        [{ ...rest, text: part.text.slice(middle), ...(thoughtSignature ? { thoughtSignature } : {}) }],
      )
    } else {
      pieces.push([part])
    }
  }
  if (pieces.length === 0) pieces.push([])
  return pieces.map((parts, index) => chunk(parts, index === pieces.length - 1))
}

/** A 200 SSE reply streaming `reply` (no `[DONE]`). */
export function geminiReply(reply: ScriptReply): Reply {
  return { sse: geminiChunks(reply), done: false }
}

/** A Gemini error reply: `{ error: { code, message, status, details } }`. */
export function geminiError(
  code: number,
  status: string,
  message: string,
  options: { details?: unknown[]; headers?: Record<string, string> } = {},
): Reply {
  return {
    status: code,
    body: { error: { code, message, status, ...(options.details ? { details: options.details } : {}) } },
    ...(options.headers ? { headers: options.headers } : {}),
  }
}
