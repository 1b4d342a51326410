import type { RawMessageStreamEvent, StopReason } from '@anthropic-ai/sdk/resources/messages'
import type { FinishReason, StreamChunk } from '@warmfold/llm'
import type { AdapterCallContext } from '@warmfold/llm/adapter'
import { callAborted, secretRedactor, streamIncomplete } from '@warmfold/llm/adapter'
import type { AnthropicUsage } from './map-usage.ts'
import { mapUsage, mergeUsage } from './map-usage.ts'

/** How each Anthropic `stop_reason` maps to a {@link FinishReason}; anything else is `stop`. */
export const FINISH_REASONS: { readonly [reason in StopReason]: FinishReason } = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  pause_turn: 'stop',
  tool_use: 'tool-calls',
  max_tokens: 'max-tokens',
  model_context_window_exceeded: 'max-tokens',
  refusal: 'content-filter',
}

interface ToolInput {
  readonly initial: unknown
  streamed: boolean
}

/**
 * Maps Anthropic's stream events to {@link StreamChunk}s. Block indexes are Anthropic's (the
 * position in the final content):
 *
 * - `content_block_start` of `text`, `thinking` or `tool_use` (with `id` and `name`) →
 *   `block-start`; other block types (server tools, `redacted_thinking`) are skipped with
 *   their deltas;
 * - `text_delta` / `thinking_delta` → `text-delta` / `reasoning-delta`; `input_json_delta` →
 *   `tool-call-delta` with the raw `partial_json`; `signature_delta` is kept and sent on the
 *   block's `block-end` as `signature`;
 * - `message_start` and `message_delta` usage are merged and sent as one `usage` chunk right
 *   before `finish`, at `message_stop`, with the API key redacted in `raw`; `message_start`
 *   itself yields nothing, so an error event that follows it can still be retried.
 *
 * @throws LlmError `STREAM_INCOMPLETE` when the events end without `message_stop`, `ABORTED`
 *   when they ended because the call's signal aborted.
 */
export async function* mapStream(
  events: AsyncIterable<RawMessageStreamEvent>,
  context: AdapterCallContext,
): AsyncGenerator<StreamChunk> {
  const skipped = new Set<number>()
  const signatures = new Map<number, string>()
  const toolInputs = new Map<number, ToolInput>()
  let startUsage: AnthropicUsage | undefined
  let deltaUsage: AnthropicUsage | undefined
  let stopReason: string | null = null
  let received = 0
  for await (const event of events) {
    received += 1
    switch (event.type) {
      case 'message_start':
        startUsage = (event.message?.usage ?? undefined) as unknown as AnthropicUsage | undefined
        break
      case 'content_block_start': {
        const { index } = event
        const block = event.content_block
        if (block.type === 'text') {
          yield { type: 'block-start', index, blockType: 'text' }
          if (block.text) yield { type: 'text-delta', index, delta: block.text }
        } else if (block.type === 'thinking') {
          yield { type: 'block-start', index, blockType: 'reasoning' }
          if (block.thinking) yield { type: 'reasoning-delta', index, delta: block.thinking }
          if (block.signature) signatures.set(index, block.signature)
        } else if (block.type === 'tool_use') {
          yield { type: 'block-start', index, blockType: 'tool-call', id: block.id, name: block.name }
          toolInputs.set(index, { initial: block.input, streamed: false })
        } else {
          skipped.add(index)
        }
        break
      }
      case 'content_block_delta': {
        const { index, delta } = event
        if (skipped.has(index)) break
        if (delta.type === 'text_delta') yield { type: 'text-delta', index, delta: delta.text }
        else if (delta.type === 'thinking_delta') yield { type: 'reasoning-delta', index, delta: delta.thinking }
        else if (delta.type === 'signature_delta')
          signatures.set(index, (signatures.get(index) ?? '') + delta.signature)
        else if (delta.type === 'input_json_delta') {
          const input = toolInputs.get(index)
          if (input) input.streamed = true
          if (delta.partial_json) yield { type: 'tool-call-delta', index, argumentsDelta: delta.partial_json }
        }
        break
      }
      case 'content_block_stop': {
        const { index } = event
        if (skipped.has(index)) break
        const input = toolInputs.get(index)
        // A tool_use whose input arrived whole in content_block_start (no input_json_delta).
        if (input && !input.streamed && !isEmptyObject(input.initial))
          yield { type: 'tool-call-delta', index, argumentsDelta: JSON.stringify(input.initial) }
        const signature = signatures.get(index)
        yield signature === undefined ? { type: 'block-end', index } : { type: 'block-end', index, signature }
        break
      }
      case 'message_delta':
        stopReason = event.delta?.stop_reason ?? stopReason
        if (event.usage) deltaUsage = mergeUsage(deltaUsage, event.usage as unknown as AnthropicUsage)
        break
      case 'message_stop': {
        const usage = mapUsage(mergeUsage(startUsage, deltaUsage))
        if (usage) yield { type: 'usage', usage: { ...usage, raw: secretRedactor(context.secret).value(usage.raw) } }
        yield { type: 'finish', reason: finishReason(stopReason) }
        return
      }
      default:
        // Event types this adapter does not know carry nothing it can map.
        break
    }
  }
  if (context.signal?.aborted) throw callAborted(context, context.signal.reason)
  throw streamIncomplete(context, `${received} events without message_stop`)
}

/** The finish reason of an Anthropic `stop_reason` (`stop` when absent or unknown). */
export function finishReason(stopReason: string | null | undefined): FinishReason {
  return stopReason && Object.hasOwn(FINISH_REASONS, stopReason) ? FINISH_REASONS[stopReason as StopReason] : 'stop'
}

function isEmptyObject(value: unknown): boolean {
  return value === undefined || value === null || (typeof value === 'object' && Object.keys(value).length === 0)
}
