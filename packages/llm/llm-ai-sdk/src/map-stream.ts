import type { LanguageModelV3FinishReason, LanguageModelV3StreamPart, SharedV3ProviderMetadata } from '@ai-sdk/provider'
import type { FinishReason, LlmError, StreamChunk } from '@warmfold/llm'
import type { AdapterCallContext } from '@warmfold/llm/adapter'
import { callAborted, secretRedactor, streamIncomplete } from '@warmfold/llm/adapter'
import { mapError } from './map-error.ts'
import { mapUsage } from './map-usage.ts'
import { encodeSignature, mergeMetadata } from './signature.ts'

/** How each unified V3 finish reason maps to a {@link FinishReason} (`error` is thrown instead). */
export const FINISH_REASONS: {
  readonly [reason in Exclude<LanguageModelV3FinishReason['unified'], 'error'>]: FinishReason
} = {
  stop: 'stop',
  length: 'max-tokens',
  'content-filter': 'content-filter',
  'tool-calls': 'tool-calls',
  other: 'stop',
}

interface OpenBlock {
  readonly index: number
  readonly metadata: Record<string, Record<string, unknown>>
  /** Tool calls: the argument text streamed so far. */
  argumentsText: string
}

/**
 * Maps V3 stream parts to {@link StreamChunk}s. Every `*-start` opens a new warmfold block (the
 * next index), so a provider that reuses a part id for a later segment (the OpenAI-compatible
 * provider's `txt-0`) still yields separate blocks:
 *
 * - `text-*` / `reasoning-*` → `block-start`, `text-delta` / `reasoning-delta`, `block-end`;
 * - `tool-input-start` (id, name) / `tool-input-delta` → `block-start` / `tool-call-delta` with the
 *   raw argument text; the final `tool-call` part ends the block (a `tool-call` without input
 *   parts is one whole block; when no delta carried text, its `input` is the arguments);
 * - the provider metadata of a block's parts (start, deltas, end, the `tool-call`) is merged and
 *   sent on its `block-end` as `signature` (see `encodeSignature`);
 * - `finish` → a `usage` chunk (`mapUsage`, `raw` redacted) and `finish`;
 * - `error` → thrown as an `LlmError` (`mapError`); a provider's "ended without a finish reason"
 *   error is `STREAM_INCOMPLETE`;
 * - `stream-start`, `response-metadata`, `raw`, sources, files and provider-executed tool parts
 *   carry nothing warmfold keeps.
 *
 * @throws LlmError `STREAM_INCOMPLETE` when the parts end without `finish` (or with finish reason
 *   `error`), `ABORTED` when they ended because the call's signal aborted.
 */
export async function* mapStream(
  parts: AsyncIterable<LanguageModelV3StreamPart>,
  context: AdapterCallContext,
): AsyncGenerator<StreamChunk> {
  const open = new Map<string, OpenBlock>()
  let next = 0
  let received = 0
  const start = (key: string, metadata: SharedV3ProviderMetadata | undefined): OpenBlock => {
    const block: OpenBlock = { index: next++, metadata: {}, argumentsText: '' }
    mergeMetadata(block.metadata, metadata)
    open.set(key, block)
    return block
  }
  const end = (key: string, metadata: SharedV3ProviderMetadata | undefined): StreamChunk | undefined => {
    const block = open.get(key)
    if (!block) return undefined
    open.delete(key)
    mergeMetadata(block.metadata, metadata)
    const signature = encodeSignature(block.metadata)
    return { type: 'block-end', index: block.index, ...(signature === undefined ? {} : { signature }) }
  }
  for await (const part of parts) {
    received += 1
    switch (part.type) {
      case 'text-start':
      case 'reasoning-start': {
        const kind = part.type === 'text-start' ? 'text' : 'reasoning'
        yield { type: 'block-start', index: start(`${kind}:${part.id}`, part.providerMetadata).index, blockType: kind }
        break
      }
      case 'text-delta':
      case 'reasoning-delta': {
        const kind = part.type === 'text-delta' ? 'text' : 'reasoning'
        const block = open.get(`${kind}:${part.id}`) ?? start(`${kind}:${part.id}`, undefined)
        mergeMetadata(block.metadata, part.providerMetadata)
        if (part.delta !== '') yield { type: `${kind}-delta`, index: block.index, delta: part.delta }
        break
      }
      case 'text-end':
      case 'reasoning-end': {
        const chunk = end(`${part.type === 'text-end' ? 'text' : 'reasoning'}:${part.id}`, part.providerMetadata)
        if (chunk) yield chunk
        break
      }
      case 'tool-input-start': {
        if (part.providerExecuted) break
        const block = start(`tool:${part.id}`, part.providerMetadata)
        yield { type: 'block-start', index: block.index, blockType: 'tool-call', id: part.id, name: part.toolName }
        break
      }
      case 'tool-input-delta': {
        const block = open.get(`tool:${part.id}`)
        if (!block || part.delta === '') break
        block.argumentsText += part.delta
        yield { type: 'tool-call-delta', index: block.index, argumentsDelta: part.delta }
        break
      }
      case 'tool-input-end':
        mergeMetadata(open.get(`tool:${part.id}`)?.metadata ?? {}, part.providerMetadata)
        break
      case 'tool-call': {
        if (part.providerExecuted) break
        let block = open.get(`tool:${part.toolCallId}`)
        if (!block) {
          block = start(`tool:${part.toolCallId}`, undefined)
          yield {
            type: 'block-start',
            index: block.index,
            blockType: 'tool-call',
            id: part.toolCallId,
            name: part.toolName,
          }
        }
        if (block.argumentsText === '' && part.input !== '')
          yield { type: 'tool-call-delta', index: block.index, argumentsDelta: part.input }
        yield end(`tool:${part.toolCallId}`, part.providerMetadata)!
        break
      }
      case 'finish': {
        if (part.finishReason.unified === 'error')
          throw incomplete(context, received, `finish reason "error" (${part.finishReason.raw ?? 'no raw reason'})`)
        const usage = mapUsage(part.usage)
        if (usage)
          yield {
            type: 'usage',
            usage: usage.raw === undefined ? usage : { ...usage, raw: secretRedactor(context.secret).value(usage.raw) },
          }
        yield { type: 'finish', reason: FINISH_REASONS[part.finishReason.unified] ?? 'stop' }
        return
      }
      case 'error': {
        const error = part.error
        if (error instanceof Error && /ended without a finish reason/i.test(error.message))
          throw incomplete(context, received, 'no finish reason')
        throw mapError(error, context)
      }
      default:
        break
    }
  }
  if (context.signal?.aborted) throw callAborted(context, secretRedactor(context.secret).error(context.signal.reason))
  throw incomplete(context, received, 'no finish part')
}

function incomplete(context: AdapterCallContext, received: number, why: string): LlmError {
  return streamIncomplete(context, `${received} parts with ${why}`)
}

/**
 * A fresh predicate for one stream: whether a part makes progress. Content (a non-empty delta, a
 * delta carrying provider metadata such as a signature, a block start or end, a tool call), the
 * finish and errors do; `stream-start`, `response-metadata`, `raw` parts and empty deltas do not,
 * so a server that sends only keep-alives is stalled.
 */
export function streamProgress(): (part: LanguageModelV3StreamPart) => boolean {
  return (part) => {
    switch (part.type) {
      case 'text-delta':
      case 'reasoning-delta':
        return part.delta !== '' || part.providerMetadata !== undefined
      case 'tool-input-delta':
        return part.delta !== ''
      case 'stream-start':
      case 'response-metadata':
      case 'raw':
        return false
      default:
        return true
    }
  }
}
