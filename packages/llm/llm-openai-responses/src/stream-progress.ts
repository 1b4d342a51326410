import type { ResponsesEvent } from './map-stream.ts'

const CONTENT_DELTAS = new Set([
  'response.output_text.delta',
  'response.refusal.delta',
  'response.reasoning_summary_text.delta',
  'response.function_call_arguments.delta',
])
const ENDINGS = new Set(['response.completed', 'response.incomplete', 'response.failed', 'error'])

/**
 * A fresh predicate for one stream: whether an event makes progress. Progress is a non-empty
 * content delta, an item that opens or completes, or the end of the response. `response.created`,
 * `response.in_progress` (the keep-alive of a long reasoning phase is not content), empty deltas,
 * content-part bookkeeping and unknown events are not: a server that sends only those is stalled.
 */
export function streamProgress(): (event: ResponsesEvent) => boolean {
  return (event) => {
    if (CONTENT_DELTAS.has(event.type)) return typeof event.delta === 'string' && event.delta !== ''
    return (
      event.type === 'response.output_item.added' ||
      event.type === 'response.output_item.done' ||
      ENDINGS.has(event.type)
    )
  }
}
