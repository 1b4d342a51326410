import type { CacheBreakCause } from './cache-events.ts'
import type { Comparison } from './first-divergence.ts'

const CAUSE_PHRASES: Readonly<Partial<Record<CacheBreakCause, string>>> = {
  fold: 'a compaction/summary (fold) was logged since',
  prune: 'a compaction/prune rewrote it since',
  unknown: 'no fold or prune logged since explains it',
}

/**
 * One sentence saying where a summary call departs from the last conversation request and why,
 * for the `cache/guard` event and the guard's error.
 */
export function describeSummaryDivergence(comparison: Comparison, cause: CacheBreakCause): string {
  if (comparison.shape) return `the summary call is not a replay plus one instruction: ${comparison.shape}`
  const divergence = comparison.divergence
  const at = divergence.charOffset === undefined ? '' : ` at character ${divergence.charOffset}`
  switch (divergence.part) {
    case 'envelope':
      return `the summary call's ${divergence.field} differs from the last conversation request's, so it lands in another cache family`
    case 'tools':
      return `the summary call's tool ${divergence.index} differs from the last conversation request's (tools added, removed, reordered or changed)${at}`
    case 'system':
      return `the summary call's system prompt differs from the last conversation request's${at}`
    case 'message':
      return `the summary call's message ${divergence.index} (${divergence.role}) differs from the last conversation request's${at}: ${CAUSE_PHRASES[cause] ?? cause}`
    default:
      return `the summary call diverges from the last conversation request (${divergence.part})`
  }
}
