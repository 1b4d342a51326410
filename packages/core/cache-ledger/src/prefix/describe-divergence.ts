import type { CacheBreakCause, CacheDivergence } from './cache-divergence.ts'
import type { PromptDivergence } from './compare-seen-requests.ts'
import type { Comparison } from './first-divergence.ts'

/**
 * The phrase book: the words that say where a prompt departs from what it is compared with. One
 * file, so a break reads the same in the ledger's guard, the bridge and the doctor.
 */

const number = new Intl.NumberFormat('en-US')

/** `1,234` */
export function formatCount(value: number): string {
  return number.format(value)
}

const CAUSE_PHRASES: Readonly<Partial<Record<CacheBreakCause, string>>> = {
  fold: 'a compaction/summary (fold) was logged since',
  prune: 'a compaction/prune rewrote it since',
  unknown: 'no fold or prune logged since explains it',
}

/** Where a summary call is compared with: the last conversation request. */
const REFERENCE = "the last conversation request's"

/**
 * One sentence saying where a summary call departs from the last conversation request and why,
 * for the ledger's `cache/guard` event and the guard's error.
 */
export function describeSummaryDivergence(comparison: Comparison, cause: CacheBreakCause): string {
  if (comparison.shape) return `the summary call is not a replay plus one instruction: ${comparison.shape}`
  const divergence: CacheDivergence = comparison.divergence
  const at = divergence.charOffset === undefined ? '' : ` at character ${divergence.charOffset}`
  switch (divergence.part) {
    case 'envelope':
      return `the summary call's ${divergence.field} differs from ${REFERENCE}, so it lands in another cache family`
    case 'tools':
      return (
        `the summary call's tool ${divergence.index} differs from ${REFERENCE} ` +
        `(tools added, removed, reordered or changed)${at}`
      )
    case 'system':
      return `the summary call's system prompt differs from ${REFERENCE}${at}`
    case 'message':
      return (
        `the summary call's message ${divergence.index} (${divergence.role}) differs from ${REFERENCE}${at}: ` +
        `${CAUSE_PHRASES[cause] ?? cause}`
      )
    default:
      return `the summary call diverges from the last conversation request (${divergence.part})`
  }
}

/**
 * One phrase saying where a wire request first differs from its best match (the doctor's
 * reports), e.g. `message 4 (tool) at char 2,310`.
 */
export function describeDivergence(divergence: PromptDivergence): string {
  const at = divergence.charOffset === undefined ? '' : ` at char ${number.format(divergence.charOffset)}`
  switch (divergence.part) {
    case 'first':
      return 'first of its kind: no earlier request to reuse'
    case 'none':
      return 'whole prompt sent before'
    case 'envelope':
      return `another cache family: ${divergence.field} differs`
    case 'tools':
      return `tools differ from tool ${divergence.toolIndex}${at}`
    case 'system':
      return `system prompt differs${at}`
    case 'messages':
      return `message ${divergence.messageIndex} (${divergence.role})${at}`
  }
}
