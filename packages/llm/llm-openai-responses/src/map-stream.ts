import type { FinishReason, StreamChunk } from '@warmfold/llm'
import type { AdapterCallContext, StreamBlockType } from '@warmfold/llm/adapter'
import { callAborted, secretRedactor, streamIncomplete } from '@warmfold/llm/adapter'
import { streamError } from './map-error.ts'
import { mapUsage } from './map-usage.ts'
import type { MessagePhase } from './message-phase.ts'
import { encodeMessagePhase } from './message-phase.ts'
import type { ReasoningSummaryPart } from './reasoning-signature.ts'
import { encodeReasoningSignature } from './reasoning-signature.ts'

/** A stream event, loosely typed: only the fields this mapper reads. */
export interface ResponsesEvent {
  readonly type: string
  readonly [field: string]: any
}

/** Separates two reasoning summary parts in a `ReasoningBlock`'s text. */
export const SUMMARY_SEPARATOR = '\n\n'

interface OpenBlock {
  readonly blockType: StreamBlockType
  /** Whether a delta carried content, so the `done` item's full content is not sent again. */
  streamed: boolean
}

/**
 * Maps Responses stream events to {@link StreamChunk}s. A block's index is the item's
 * `output_index`; items other than `reasoning`, `message` and `function_call` are skipped.
 *
 * - `response.output_item.added` → `block-start` (`reasoning`, `text`, or `tool-call` with the
 *   item's `call_id` and `name`);
 * - `response.output_text.delta` / `response.refusal.delta` → `text-delta`;
 *   `response.reasoning_summary_text.delta` → `reasoning-delta`, with {@link SUMMARY_SEPARATOR}
 *   before every summary part after the first; `response.function_call_arguments.delta` →
 *   `tool-call-delta` with the raw text;
 * - `response.output_item.done` → `block-end`; a reasoning item's carries the signature (id,
 *   `encrypted_content` and summary parts exactly as received, see `encodeReasoningSignature`),
 *   a message's its `phase` when it has one. Content that arrived only in the done item is sent
 *   as one delta first;
 * - `response.completed` → `usage`, `finish` (`tool-calls` when a function call was streamed,
 *   else `stop`); `response.incomplete` → the same with `max-tokens` (`max_output_tokens`) or
 *   `content-filter`;
 * - `response.failed` and `error` → an `LlmError` by the error's code.
 *
 * Nothing is yielded before the first item opens, so a failure up to then can be retried.
 * @throws LlmError `STREAM_INCOMPLETE` when the events end before `response.completed` or
 *   `response.incomplete`, `ABORTED` when they ended because the call's signal aborted.
 */
export async function* mapStream(
  events: AsyncIterable<ResponsesEvent>,
  context: AdapterCallContext,
): AsyncGenerator<StreamChunk> {
  const open = new Map<number, OpenBlock>()
  let calls = 0
  let received = 0
  for await (const event of events) {
    received += 1
    switch (event.type) {
      case 'response.output_item.added': {
        const index: number = event.output_index
        const item = event.item ?? {}
        if (item.type === 'reasoning') {
          open.set(index, { blockType: 'reasoning', streamed: false })
          yield { type: 'block-start', index, blockType: 'reasoning' }
        } else if (item.type === 'message') {
          open.set(index, { blockType: 'text', streamed: false })
          yield { type: 'block-start', index, blockType: 'text' }
        } else if (item.type === 'function_call') {
          open.set(index, { blockType: 'tool-call', streamed: false })
          calls += 1
          yield { type: 'block-start', index, blockType: 'tool-call', id: item.call_id, name: item.name }
        }
        break
      }
      case 'response.output_text.delta':
      case 'response.refusal.delta':
        yield* delta(open, event.output_index, 'text', event.delta)
        break
      case 'response.reasoning_summary_part.added':
        if (event.summary_index > 0) yield* delta(open, event.output_index, 'reasoning', SUMMARY_SEPARATOR)
        break
      case 'response.reasoning_summary_text.delta':
        yield* delta(open, event.output_index, 'reasoning', event.delta)
        break
      case 'response.function_call_arguments.delta':
        yield* delta(open, event.output_index, 'tool-call', event.delta)
        break
      case 'response.output_item.done': {
        const index: number = event.output_index
        const block = open.get(index)
        if (!block) break
        open.delete(index)
        yield* finishItem(index, block, event.item ?? {})
        break
      }
      case 'response.completed':
      case 'response.incomplete': {
        const response = event.response ?? {}
        for (const index of open.keys()) yield { type: 'block-end', index }
        const usage = mapUsage(response.usage)
        if (usage) yield { type: 'usage', usage: { ...usage, raw: secretRedactor(context.secret).value(usage.raw) } }
        yield {
          type: 'finish',
          reason:
            event.type === 'response.completed'
              ? calls > 0
                ? 'tool-calls'
                : 'stop'
              : incompleteReason(response.incomplete_details?.reason),
        }
        return
      }
      case 'response.failed': {
        const failure = event.response?.error ?? {}
        throw streamError(failure.code ?? undefined, String(failure.message ?? ''), context, 'reported response.failed')
      }
      case 'error':
        throw streamError(event.code ?? undefined, String(event.message ?? ''), context)
      default:
        // response.created, in_progress, content_part.*, *.done text events: nothing to map.
        break
    }
  }
  if (context.signal?.aborted) throw callAborted(context, context.signal.reason)
  throw streamIncomplete(context, `${received} events without response.completed`)
}

/** The finish reason of `incomplete_details.reason`. */
export function incompleteReason(reason: unknown): FinishReason {
  return reason === 'content_filter' ? 'content-filter' : 'max-tokens'
}

function* delta(
  open: Map<number, OpenBlock>,
  index: number,
  blockType: StreamBlockType,
  text: unknown,
): Generator<StreamChunk> {
  const block = open.get(index)
  if (!block || block.blockType !== blockType || typeof text !== 'string' || text === '') return
  block.streamed = true
  if (blockType === 'text') yield { type: 'text-delta', index, delta: text }
  else if (blockType === 'reasoning') yield { type: 'reasoning-delta', index, delta: text }
  else yield { type: 'tool-call-delta', index, argumentsDelta: text }
}

function* finishItem(index: number, block: OpenBlock, item: any): Generator<StreamChunk> {
  if (block.blockType === 'reasoning') {
    const summary: ReasoningSummaryPart[] = Array.isArray(item.summary) ? item.summary : []
    if (!block.streamed) {
      const text = summary.map((part) => part.text).join(SUMMARY_SEPARATOR)
      if (text) yield { type: 'reasoning-delta', index, delta: text }
    }
    const signature = encodeReasoningSignature({
      id: String(item.id ?? ''),
      encrypted_content: typeof item.encrypted_content === 'string' ? item.encrypted_content : null,
      summary,
    })
    yield { type: 'block-end', index, signature }
    return
  }
  if (block.blockType === 'text') {
    if (!block.streamed) {
      const text = (Array.isArray(item.content) ? item.content : [])
        .map((part: any) =>
          typeof part?.text === 'string' ? part.text : typeof part?.refusal === 'string' ? part.refusal : '',
        )
        .join('')
      if (text) yield { type: 'text-delta', index, delta: text }
    }
    const phase: MessagePhase | undefined =
      item.phase === 'commentary' || item.phase === 'final_answer' ? item.phase : undefined
    yield phase ? { type: 'block-end', index, signature: encodeMessagePhase(phase) } : { type: 'block-end', index }
    return
  }
  if (!block.streamed && typeof item.arguments === 'string' && item.arguments !== '')
    yield { type: 'tool-call-delta', index, argumentsDelta: item.arguments }
  yield { type: 'block-end', index }
}
