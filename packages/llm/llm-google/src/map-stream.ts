import { randomUUID } from 'node:crypto'
import type { FinishReason, StreamChunk } from '@warmfold/llm'
import type { AdapterCallContext } from '@warmfold/llm/adapter'
import { callAborted, secretRedactor, streamIncomplete } from '@warmfold/llm/adapter'
import type { GeminiUsage } from './map-usage.ts'
import { mapUsage } from './map-usage.ts'
import { SYNTHETIC_CALL_ID_PREFIX } from './serialize-request.ts'

/** The fields of a streamed `GenerateContentResponse` the mapper reads. */
export interface GeminiChunk {
  readonly candidates?: ReadonlyArray<{
    readonly content?: { readonly parts?: readonly GeminiResponsePart[] }
    readonly finishReason?: string
  }>
  readonly usageMetadata?: GeminiUsage
  readonly promptFeedback?: { readonly blockReason?: string }
}

/** A part of a streamed candidate. */
export interface GeminiResponsePart {
  readonly text?: string
  readonly thought?: boolean
  readonly thoughtSignature?: string
  readonly functionCall?: { readonly id?: string; readonly name?: string; readonly args?: unknown }
}

/** How each Gemini `finishReason` maps to a {@link FinishReason}; `STOP` after a function call is `tool-calls`. */
export const FINISH_REASONS: { readonly [reason: string]: FinishReason } = {
  STOP: 'stop',
  MAX_TOKENS: 'max-tokens',
  SAFETY: 'content-filter',
  RECITATION: 'content-filter',
  LANGUAGE: 'content-filter',
  BLOCKLIST: 'content-filter',
  PROHIBITED_CONTENT: 'content-filter',
  SPII: 'content-filter',
  IMAGE_SAFETY: 'content-filter',
  IMAGE_PROHIBITED_CONTENT: 'content-filter',
  MALFORMED_FUNCTION_CALL: 'error',
  UNEXPECTED_TOOL_CALL: 'error',
  TOO_MANY_TOOL_CALLS: 'error',
  OTHER: 'error',
}

/**
 * The finish reason of a Gemini `finishReason` (`stop` when unknown); `tool-calls`
 * when the turn called a function and stopped.
 */
export function finishReason(reason: string | undefined, calledTools: boolean): FinishReason {
  const mapped = reason !== undefined && Object.hasOwn(FINISH_REASONS, reason) ? FINISH_REASONS[reason]! : 'stop'
  return mapped === 'stop' && calledTools ? 'tool-calls' : mapped
}

/**
 * Maps Gemini's streamed chunks (SSE `data:` items, no terminator) to {@link StreamChunk}s. Only
 * the first candidate is read.
 *
 * - consecutive text parts of one kind (thought or answer) are one block: `thought: true` parts a
 *   reasoning block, others a text block;
 * - every `functionCall` part is a whole tool-call block: its `args` object as JSON text (the
 *   model's key order), its `id`, or an id made up with {@link SYNTHETIC_CALL_ID_PREFIX} when it
 *   has none (never sent back);
 * - a part's `thoughtSignature` ends its block and is the block's `signature`, so it is replayed on
 *   that same part; a signature on an empty text part (Gemini may send one last) becomes an empty
 *   text block that carries it;
 * - the last `usageMetadata` (each chunk carries the running totals) and the finish reason are
 *   sent once the stream ends, `raw` with the API key redacted.
 *
 * @throws LlmError `STREAM_INCOMPLETE` when the stream ends without a `finishReason` (and no
 *   blocked prompt), `ABORTED` when it ended because the call aborted.
 */
export async function* mapStream(
  chunks: AsyncIterable<GeminiChunk>,
  context: AdapterCallContext,
): AsyncGenerator<StreamChunk> {
  let index = -1
  let open: 'text' | 'reasoning' | undefined
  let calledTools = false
  let usage: GeminiUsage | undefined
  let reason: string | undefined
  let blocked: string | undefined
  let received = 0
  for await (const chunk of chunks) {
    received += 1
    if (chunk.usageMetadata) usage = chunk.usageMetadata
    if (chunk.promptFeedback?.blockReason) blocked = chunk.promptFeedback.blockReason
    const candidate = chunk.candidates?.[0]
    for (const part of candidate?.content?.parts ?? []) {
      const signature = part.thoughtSignature || undefined
      if (part.functionCall) {
        if (open) yield { type: 'block-end', index }
        open = undefined
        index += 1
        calledTools = true
        const { id, name, args } = part.functionCall
        yield {
          type: 'block-start',
          index,
          blockType: 'tool-call',
          id: id || `${SYNTHETIC_CALL_ID_PREFIX}${randomUUID()}`,
          name: name ?? '',
        }
        const text = JSON.stringify(args ?? {})
        if (text !== '{}') yield { type: 'tool-call-delta', index, argumentsDelta: text }
        yield signature === undefined ? { type: 'block-end', index } : { type: 'block-end', index, signature }
        continue
      }
      if (typeof part.text !== 'string') continue
      const kind = part.thought ? 'reasoning' : 'text'
      if (part.text === '' && signature === undefined) continue
      // A signature on an empty part gets a block of its own, so it goes back on an empty part as it came.
      if (open !== kind || (part.text === '' && signature !== undefined)) {
        if (open) yield { type: 'block-end', index }
        index += 1
        open = kind
        yield { type: 'block-start', index, blockType: kind }
      }
      if (part.text !== '')
        yield kind === 'reasoning'
          ? { type: 'reasoning-delta', index, delta: part.text }
          : { type: 'text-delta', index, delta: part.text }
      if (signature !== undefined) {
        yield { type: 'block-end', index, signature }
        open = undefined
      }
    }
    if (candidate?.finishReason) reason = candidate.finishReason
  }
  if (context.signal?.aborted) throw callAborted(context, context.signal.reason)
  if (reason === undefined && blocked === undefined)
    throw streamIncomplete(context, `${received} chunks without a finishReason`)
  if (open) yield { type: 'block-end', index }
  const mapped = mapUsage(usage)
  if (mapped) yield { type: 'usage', usage: { ...mapped, raw: secretRedactor(context.secret).value(mapped.raw) } }
  yield { type: 'finish', reason: reason === undefined ? 'content-filter' : finishReason(reason, calledTools) }
}
