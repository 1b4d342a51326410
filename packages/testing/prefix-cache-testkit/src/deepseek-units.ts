import type { CacheProfile } from './cache-profile.ts'
import { CHARS_PER_TOKEN, wholeTokensOf } from './cache-profile.ts'
import type { PromptLayout, TrieMatch, TrieNode } from '@warmfold/cache-ledger/prefix'

type DeepSeekProfile = Extract<CacheProfile, { kind: 'deepseek' }>

/** What a request read and stored under the `deepseek` profile. */
export interface DeepSeekCharge {
  readonly cachedTokens: number
  readonly cacheWriteTokens: number
  /** Prefix units (their end, in prompt characters) this request persists or refreshes. */
  readonly persist: readonly number[]
}

/**
 * Charges a request under the `deepseek` profile (DeepSeek's context caching on disk,
 * https://api-docs.deepseek.com/guides/kv_cache: its "Cache Persistence and Hit Rules", and the
 * 64-token storage unit of its earlier "Additional Notes"):
 * - a hit needs a **full** match of one persisted prefix unit; the longest live unit that is a
 *   prefix of this prompt is read (and refreshed);
 * - units are stored in whole storage units of `unitTokens` (64): a prefix is persisted rounded
 *   down to whole storage units, so content shorter than one unit is never cached;
 * - this request persists a unit at the end of its input, and, when it shares a prefix with an
 *   earlier live request of its family, that common prefix as a unit of its own, which later
 *   requests (not this one) can hit; units at the end of the model output (the simulator sees
 *   requests only) and at unpublished fixed intervals are not modelled;
 * - writes are not billed by DeepSeek; `cacheWriteTokens` counts the tokens it newly stored.
 */
export function chargeDeepSeek(
  profile: DeepSeekProfile,
  layout: PromptLayout,
  match: TrieMatch,
  clock: number,
): DeepSeekCharge {
  const depth = match.path.length - 1
  const branchStart = layout.offsets[depth] as number
  const isLive = (usedAt: number) => clock - usedAt <= profile.ttlMs
  let readChars = 0
  for (const node of match.path) {
    if (node.units) for (const [end, usedAt] of node.units) if (end > readChars && isLive(usedAt)) readChars = end
  }
  for (const { node, sharedChars } of match.branches) {
    if (node.units)
      for (const [end, usedAt] of node.units)
        if (end > readChars && end <= branchStart + sharedChars && isLive(usedAt)) readChars = end
  }
  const unitChars = profile.unitTokens * CHARS_PER_TOKEN
  const roundDown = (chars: number) => Math.floor(wholeTokensOf(chars) / profile.unitTokens) * unitChars
  const promptChars = layout.offsets[layout.segments.length] as number
  const inputEnd = roundDown(promptChars)
  const commonPrefix = roundDown(match.liveChars)
  const persist = [readChars, commonPrefix, inputEnd].filter((end) => end > 0)
  return {
    cachedTokens: wholeTokensOf(readChars),
    // Every persisted unit is a prefix of this prompt; the end-of-input unit is the longest.
    cacheWriteTokens: wholeTokensOf(Math.max(0, inputEnd - readChars)),
    persist,
  }
}

/**
 * Stores the units `ends` (prompt characters) on the request's own segment nodes at `clock`, so
 * a unit's node is always at least as fresh as the unit.
 */
export function persistUnits(
  layout: PromptLayout,
  nodes: readonly TrieNode[],
  ends: readonly number[],
  clock: number,
): void {
  for (const end of ends) {
    // The segment holding the unit's last character: offsets[position] < end ≤ offsets[position + 1].
    let low = 0
    let high = layout.segments.length - 1
    while (low < high) {
      const middle = (low + high) >> 1
      if ((layout.offsets[middle + 1] as number) < end) low = middle + 1
      else high = middle
    }
    const node = nodes[low] as TrieNode
    ;(node.units ??= new Map()).set(end, clock)
  }
}
