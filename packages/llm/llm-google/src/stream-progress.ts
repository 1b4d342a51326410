import type { GeminiChunk } from './map-stream.ts'

/**
 * A fresh predicate for one stream: whether a chunk makes progress. Progress is content (a
 * non-empty text, a function call, a thought signature), a finish reason, a blocked prompt, or
 * usage that differs from the last usage seen. A server that keeps sending empty chunks or the
 * same usage is stalled.
 */
export function streamProgress(): (chunk: GeminiChunk) => boolean {
  let lastUsage: string | undefined
  return (chunk) => {
    const usage = chunk.usageMetadata ? JSON.stringify(chunk.usageMetadata) : undefined
    const usageMoved = usage !== undefined && usage !== lastUsage
    if (usage !== undefined) lastUsage = usage
    const candidate = chunk.candidates?.[0]
    const content = (candidate?.content?.parts ?? []).some(
      (part) =>
        Boolean(part.functionCall) ||
        Boolean(part.thoughtSignature) ||
        (typeof part.text === 'string' && part.text !== ''),
    )
    return content || Boolean(candidate?.finishReason) || Boolean(chunk.promptFeedback?.blockReason) || usageMoved
  }
}
