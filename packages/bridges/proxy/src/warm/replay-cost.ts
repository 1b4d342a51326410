import type { RequestApi, SeenRequest } from '@warmfold/cache-ledger/prefix'
import {
  canonicalize,
  compareSeenRequests,
  formatCount,
  SegmentInterner,
  seenRequestOf,
} from '@warmfold/cache-ledger/prefix'

/**
 * What a summary request costs as the agent wrote it and as its warm rewrite, in uncached-input
 * character units at a cache read of `cacheRead` (relative to an uncached input character): each
 * request's prompt characters in provider render order, those it shares from the start with the
 * conversation request it replays (same envelope) counted at `cacheRead`, the rest at 1. Cache
 * writes and output are left out: both requests write and answer alike.
 */
export interface ReplayCost {
  readonly cacheRead: number
  readonly original: number
  readonly rewritten: number
  /** Characters of the rewrite read from the cache (the replayed conversation request). */
  readonly cachedChars: number
}

/** {@link ReplayCost} of sending `rewritten` instead of `original`, which both follow `conversation`. */
export function replayCost(
  api: RequestApi,
  url: string,
  jsons: {
    readonly conversation: Readonly<Record<string, unknown>>
    readonly original: Readonly<Record<string, unknown>>
    readonly rewritten: Readonly<Record<string, unknown>>
  },
  cacheRead: number,
): ReplayCost {
  const interner = new SegmentInterner()
  const seen = (json: Readonly<Record<string, unknown>>, index: number): SeenRequest =>
    seenRequestOf(canonicalize({ body: json, headers: {}, url }, api), interner, index)
  const conversation = seen(jsons.conversation, 0)
  // What the prefix model says a request shares from the start with the conversation request: whole
  // segments by id, then the first differing one's shared start; nothing across cache families.
  const cost = (json: Readonly<Record<string, unknown>>, index: number) => {
    const request = seen(json, index)
    const cached = compareSeenRequests(request, conversation).divergence.charOffset ?? 0
    const chars = request.layout.offsets[request.layout.segments.length] as number
    return { units: cached * cacheRead + (chars - cached), cached }
  }
  const original = cost(jsons.original, 1)
  const rewritten = cost(jsons.rewritten, 2)
  return { cacheRead, original: original.units, rewritten: rewritten.units, cachedChars: rewritten.cached }
}

/** The cost comparison as a phrase: `at a cache read of 0.1×: the rewrite 6,754 character-units, as written 9,677`. */
export function describeReplayCost(cost: ReplayCost): string {
  return (
    `at a cache read of ${cost.cacheRead}×: the rewrite ${formatCount(Math.round(cost.rewritten))} ` +
    `character-units (${formatCount(cost.cachedChars)} characters read from the cache), ` +
    `as written ${formatCount(Math.round(cost.original))}`
  )
}
