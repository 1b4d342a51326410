import type { GenerateOptions } from '@warmfold/llm'
import { canonicalJson } from '@warmfold/llm'
import { chargeAnthropic, writeAnthropicEntries } from './anthropic-breakpoints.ts'
import type { CacheProfile } from './cache-profile.ts'
import { parseCacheProfile, tokensOf, wholeTokensOf } from './cache-profile.ts'
import type { CacheObservation, CacheTotals, Divergence, LoggedRewrite } from './cache-observation.ts'
import { totalsOf } from './cache-observation.ts'
import { chargeDeepSeek, persistUnits } from './deepseek-units.ts'
import type { PromptLayout, TrieMatch, TrieNode } from '@warmfold/cache-ledger/prefix'
import { createTrieRoot, ENVELOPE_FIELDS, matchPrefix, PromptRenderer, sendPrefix } from '@warmfold/cache-ledger/prefix'

/** `bytes` and `blocks` keep no entries beyond the trie itself. */
function storeNothing(): void {}

/**
 * A deterministic provider prefix-cache simulator. Requests are grouped into families by their
 * prompt-shaping envelope (provider, model, reasoning effort, temperature, stop); a request is
 * charged at the hit price for the longest prefix it shares with an earlier request of its
 * family that has not expired on the virtual clock, under the chosen {@link CacheProfile}.
 *
 * Usable on its own (`new PrefixCache().observe(request)`) or through `PrefixCacheService`.
 */
export class PrefixCache {
  readonly profile: CacheProfile
  private readonly renderer = new PromptRenderer(canonicalJson)
  private readonly families = new Map<string, TrieNode>()
  private readonly list: CacheObservation[] = []
  private readonly lastConversation = new Map<string, { family: string; ids: number[] }>()
  private readonly pendingRewrites = new Map<string, LoggedRewrite[]>()
  private last?: GenerateOptions
  private clock = 0
  /** Writes of requests whose first token has not come yet on the virtual clock, by due time. */
  private readonly deferred: { readonly at: number; readonly write: (at: number) => void }[] = []

  /**
   * When set, what a request writes becomes readable only this many milliseconds after it was
   * sent (its time to first token: a provider writes the prefix as it prefills it), so a request
   * sent meanwhile misses it, as on a real provider. Unset, writes are readable at once.
   */
  entryDelayMs?: (observation: CacheObservation) => number

  constructor(profile: CacheProfile | string = 'bytes') {
    this.profile = typeof profile === 'string' ? parseCacheProfile(profile) : profile
  }

  /** Every observation so far, in order. */
  get observations(): readonly CacheObservation[] {
    return this.list
  }

  /** Totals over all observations, or those `filter` keeps. */
  totals(filter?: (observation: CacheObservation) => boolean): CacheTotals {
    return totalsOf(filter ? this.list.filter(filter) : this.list)
  }

  /** The virtual clock, in milliseconds since the simulator was created (see {@link advanceClock}). */
  get now(): number {
    return this.clock
  }

  /** Advances the virtual clock (milliseconds); every profile's entries expire on it (`profile.ttlMs`). */
  advanceClock(milliseconds: number): void {
    if (!(milliseconds >= 0)) throw new RangeError(`advanceClock: milliseconds must be ≥ 0, got ${milliseconds}`)
    this.clock += milliseconds
  }

  /** Records a durable rewrite logged in `sessionId` (it will explain the next break). */
  noteRewrite(sessionId: string, rewrite: LoggedRewrite): void {
    this.pendingRewrites.set(sessionId, [...(this.pendingRewrites.get(sessionId) ?? []), rewrite])
  }

  /** Charges one request and records what happened. */
  observe(request: GenerateOptions): CacheObservation {
    this.writeDue()
    const layout = this.renderer.layout(request)
    const family = familyOf(request)
    const firstOfFamily = !this.families.has(family)
    if (firstOfFamily) this.families.set(family, createTrieRoot())
    const root = this.families.get(family) as TrieNode
    const match = matchPrefix(root, layout, this.clock, this.profile.ttlMs)
    const matchedChars = match.liveChars
    const promptChars = layout.offsets[layout.segments.length] as number
    const promptTokens = tokensOf(promptChars)
    const { cachedTokens, cacheWriteTokens, store } = this.charge(layout, match, promptTokens)
    const write = (at: number) => store(sendPrefix(root, layout.segments, at), at)
    const observation = Object.freeze({
      index: this.list.length,
      purpose: request.purpose ?? 'unspecified',
      sessionId: request.sessionId,
      family,
      promptTokens,
      cachedTokens,
      uncachedTokens: promptTokens - cachedTokens,
      cacheWriteTokens,
      promptChars,
      matchedChars,
      ...this.sessionFacts(request, family, layout),
      divergence: this.divergence(request, layout, firstOfFamily, match, promptChars),
    })
    this.list.push(observation)
    this.last = request
    const delay = this.entryDelayMs?.(observation) ?? 0
    if (delay > 0) this.deferred.push({ at: this.clock + delay, write })
    else write(this.clock)
    return observation
  }

  /** Lands the deferred writes whose time has come, in due order, each at its own time. */
  private writeDue(): void {
    this.deferred.sort((left, right) => left.at - right.at)
    while (this.deferred.length && (this.deferred[0] as { at: number }).at <= this.clock) {
      const { at, write } = this.deferred.shift() as (typeof this.deferred)[number]
      write(at)
    }
  }

  /** What the request reads and newly stores; `store` records its entries once its nodes exist. */
  private charge(
    layout: PromptLayout,
    match: TrieMatch,
    promptTokens: number,
  ): { cachedTokens: number; cacheWriteTokens: number; store: (nodes: readonly TrieNode[], at: number) => void } {
    const profile = this.profile
    const clock = this.clock
    switch (profile.kind) {
      case 'bytes': {
        // The whole prompt is stored (sending refreshes the trie), so every uncached token is a write.
        const cachedTokens = Math.min(promptTokens, wholeTokensOf(match.liveChars))
        return { cachedTokens, cacheWriteTokens: promptTokens - cachedTokens, store: storeNothing }
      }
      case 'blocks': {
        const blocks = (tokens: number) => Math.floor(tokens / profile.blockTokens) * profile.blockTokens
        const cached = blocks(Math.max(0, Math.min(wholeTokensOf(match.liveChars), promptTokens - 1)))
        // Stored: the whole blocks of the prompt's whole tokens; those inside the live match were stored before.
        const storedBefore = blocks(wholeTokensOf(match.liveChars))
        const storedAfter = blocks(wholeTokensOf(layout.offsets[layout.segments.length] as number))
        return {
          cachedTokens: cached >= profile.minTokens ? cached : 0,
          cacheWriteTokens: storedAfter - storedBefore,
          store: storeNothing,
        }
      }
      case 'anthropic':
        return {
          ...chargeAnthropic(profile, layout, match.path, clock),
          store: (nodes, at) => writeAnthropicEntries(profile, layout, nodes, at),
        }
      case 'deepseek': {
        const { cachedTokens, cacheWriteTokens, persist } = chargeDeepSeek(profile, layout, match, clock)
        return { cachedTokens, cacheWriteTokens, store: (nodes, at) => persistUnits(layout, nodes, persist, at) }
      }
    }
  }

  private sessionFacts(
    request: GenerateOptions,
    family: string,
    layout: PromptLayout,
  ): { extendsPrevious: boolean; rewritesSince: readonly LoggedRewrite[] } {
    const sessionId = request.sessionId
    if (sessionId === undefined) return { extendsPrevious: false, rewritesSince: [] }
    const rewritesSince = Object.freeze([...(this.pendingRewrites.get(sessionId) ?? [])])
    if (request.purpose !== 'conversation') return { extendsPrevious: false, rewritesSince }
    const ids = layout.segments.map((segment) => segment.id)
    const previous = this.lastConversation.get(sessionId)
    const extendsPrevious =
      !!previous &&
      previous.family === family &&
      previous.ids.length < ids.length &&
      previous.ids.every((id, index) => ids[index] === id)
    this.lastConversation.set(sessionId, { family, ids })
    this.pendingRewrites.delete(sessionId)
    return { extendsPrevious, rewritesSince }
  }

  private divergence(
    request: GenerateOptions,
    layout: PromptLayout,
    firstOfFamily: boolean,
    match: TrieMatch,
    promptChars: number,
  ): Divergence {
    if (firstOfFamily) {
      const last = this.last
      if (!last) return { part: 'first' }
      const field = ENVELOPE_FIELDS.find(
        (key) => canonicalJson(last[key] ?? null) !== canonicalJson(request[key] ?? null),
      )
      return field ? { part: 'envelope', field } : { part: 'first' }
    }
    // Expiry only explains the break when it cost characters; a family whose every prefix expired
    // is reported here too (offset 0), not as `first` or `envelope`: its envelope was seen before.
    if (match.expired)
      return {
        part: 'expired',
        offset: match.liveChars,
        expiredChars: match.expired.chars,
        idleMs: match.expired.idleMs,
      }
    const matchedChars = match.liveChars
    if (matchedChars >= promptChars) return { part: 'none' }
    const segment = layout.segments[match.path.length - 1]
    if (!segment) return { part: 'none' }
    return segment.part === 'message'
      ? { part: 'message', index: segment.index, blockIndex: segment.blockIndex, offset: matchedChars }
      : { part: segment.part, index: segment.index, offset: matchedChars }
  }
}

/** The family key of a request: its prompt-shaping envelope. */
export function familyOf(request: GenerateOptions): string {
  return canonicalJson(ENVELOPE_FIELDS.map((key) => request[key] ?? null))
}
