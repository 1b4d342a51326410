import type { CacheProfile } from './cache-profile.ts'
import { wholeTokensOf } from './cache-profile.ts'
import type { PromptLayout, TrieNode } from '@warmfold/cache-ledger/prefix'

type AnthropicProfile = Extract<CacheProfile, { kind: 'anthropic' }>

/** Segment positions of the two breakpoints the Anthropic adapter marks: end of tools + system, and the last block. */
function breakpointsOf(layout: PromptLayout): number[] {
  return [...new Set([layout.headSegments - 1, layout.segments.length - 1])].filter((position) => position >= 0)
}

/**
 * Charges a request under the `anthropic` profile: from each breakpoint, walks back at most
 * `lookbackBlocks` positions to the first unexpired entry on the live path; the longer read
 * wins and is refreshed. The request writes the prefix up to its last breakpoint beyond what it
 * read (nothing below `minTokens` whole tokens).
 */
export function chargeAnthropic(
  profile: AnthropicProfile,
  layout: PromptLayout,
  path: readonly TrieNode[],
  clock: number,
): { cachedTokens: number; cacheWriteTokens: number } {
  let readChars = 0
  let readNode: TrieNode | undefined
  for (const breakpoint of breakpointsOf(layout)) {
    for (let position = breakpoint; position >= Math.max(0, breakpoint - profile.lookbackBlocks + 1); position--) {
      const candidate = path[position + 1]
      if (!candidate || candidate.entryUsedAt === undefined || clock - candidate.entryUsedAt > profile.ttlMs) continue
      const chars = layout.offsets[position + 1] as number
      if (chars > readChars) {
        readChars = chars
        readNode = candidate
      }
      break
    }
  }
  if (readNode) readNode.entryUsedAt = clock
  const cachedTokens = wholeTokensOf(readChars)
  const lastBreakpoint = breakpointsOf(layout).at(-1)
  const writtenTokens = lastBreakpoint === undefined ? 0 : wholeTokensOf(layout.offsets[lastBreakpoint + 1] as number)
  return {
    cachedTokens,
    cacheWriteTokens: writtenTokens >= profile.minTokens ? Math.max(0, writtenTokens - cachedTokens) : 0,
  }
}

/** Writes (or refreshes) the entries at the request's breakpoints; `nodes` are its segments' nodes. */
export function writeAnthropicEntries(
  profile: AnthropicProfile,
  layout: PromptLayout,
  nodes: readonly TrieNode[],
  clock: number,
): void {
  for (const position of breakpointsOf(layout)) {
    // Whole tokens, as the charge counts the write: a prefix that bills no write stores no entry.
    if (wholeTokensOf(layout.offsets[position + 1] as number) >= profile.minTokens)
      (nodes[position] as TrieNode).entryUsedAt = clock
  }
}
