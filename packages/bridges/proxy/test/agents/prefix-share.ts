import type { RequestApi } from '@warmfold/cache-ledger/prefix'
import { canonicalize, commonPrefixLength, layoutOf, SegmentInterner } from '@warmfold/cache-ledger/prefix'
import type { RecordedRequest } from '@warmfold/test-utils'
import type { ClassifiedRequest } from './scripted-agent-server.ts'

/** How much of a conversation request a summary request repeats as its prefix. */
export interface PrefixShare {
  /** Index (in the run) of the summary request and of the conversation request before it. */
  readonly summary: number
  readonly previous: number
  /** Characters of the previous request's prompt (canonical, provider render order). */
  readonly previousChars: number
  /** Characters the summary request's prompt shares with it from the start. */
  readonly sharedChars: number
  /** Characters of the summary request's own prompt (canonical, provider render order). */
  readonly summaryChars: number
  /** `sharedChars / previousChars`. */
  readonly share: number
  /**
   * The same share over the messages alone (tools and system left out): how much of the history the
   * summary request replays verbatim, in order, whatever it did to the tools and the system prompt.
   */
  readonly messagesShare: number
}

function wire(request: RecordedRequest) {
  const headers: Record<string, string> = {}
  for (const [name, value] of Object.entries(request.headers))
    if (typeof value === 'string') headers[name.toLowerCase()] = value
  return { url: request.url, body: request.json as Record<string, unknown>, headers }
}

/**
 * The canonical prompt text of `request` in provider render order: tools, system, messages (only the
 * messages when `messagesOnly`).
 */
export function promptText(
  request: RecordedRequest,
  api: RequestApi,
  interner: SegmentInterner,
  messagesOnly = false,
): string {
  const layout = layoutOf(canonicalize(wire(request), api), interner)
  const segments = messagesOnly ? layout.segments.slice(layout.headSegments) : layout.segments
  return segments.map((segment) => segment.text).join('')
}

/**
 * For each summary request of a run, the share of the last conversation request before it that
 * it repeats as a prefix, measured with the prompt-prefix model (canonical segments in render order).
 * @throws Error when a summary request has no conversation request before it.
 */
export function summaryPrefixShares(requests: readonly ClassifiedRequest[], api: RequestApi): PrefixShare[] {
  const interner = new SegmentInterner()
  const shares: PrefixShare[] = []
  requests.forEach((entry, position) => {
    if (entry.kind !== 'summary') return
    const previous = requests.slice(0, position).findLast((candidate) => candidate.kind === 'conversation')
    if (previous === undefined) throw new Error(`summary request ${entry.index} has no conversation request before it`)
    const before = promptText(previous.request, api, interner)
    const summary = promptText(entry.request, api, interner)
    const sharedChars = commonPrefixLength(before, summary)
    const beforeMessages = promptText(previous.request, api, interner, true)
    const summaryMessages = promptText(entry.request, api, interner, true)
    shares.push({
      summary: entry.index,
      previous: previous.index,
      previousChars: before.length,
      sharedChars,
      summaryChars: summary.length,
      share: sharedChars / before.length,
      messagesShare: commonPrefixLength(beforeMessages, summaryMessages) / beforeMessages.length,
    })
  })
  return shares
}
