import type { GenerateOptions } from '@warmfold/llm'
import { canonicalJson } from '@warmfold/llm'
import type { CacheProfile } from './cache-profile.ts'
import { CHARS_PER_TOKEN, parseCacheProfile, tokensOf } from './cache-profile.ts'
import type { CacheObservation, CacheTotals, Divergence, LoggedRewrite } from './cache-observation.ts'
import { totalsOf } from './cache-observation.ts'
import type { PromptLayout } from './prompt-layout.ts'
import { commonPrefixLength, PromptRenderer } from './prompt-layout.ts'

interface TrieNode {
  readonly children: Map<number, TrieNode>
  readonly text: string
  /** Anthropic profile: a cache entry was written at this prefix, last used at this time. */
  writtenAt?: number
}

const ENVELOPE_FIELDS = ['provider', 'model', 'reasoningEffort', 'temperature', 'stop'] as const

/**
 * A deterministic provider prefix-cache simulator. Requests are grouped into families by their
 * prompt-shaping envelope (provider, model, reasoning effort, temperature, stop); a request is
 * charged at the hit price for the longest prefix it shares with an earlier request of its
 * family, under the chosen {@link CacheProfile}.
 *
 * Usable on its own (`new PrefixCache().observe(request)`) or through `PrefixCacheService`.
 */
export class PrefixCache {
  readonly profile: CacheProfile
  private readonly renderer = new PromptRenderer()
  private readonly families = new Map<string, TrieNode>()
  private readonly list: CacheObservation[] = []
  private readonly lastConversation = new Map<string, { family: string; ids: number[] }>()
  private readonly pendingRewrites = new Map<string, LoggedRewrite[]>()
  private last?: GenerateOptions
  private clock = 0

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

  /** Advances the virtual clock (milliseconds); the `anthropic` profile's entries expire on it. */
  advanceClock(milliseconds: number): void {
    if (!(milliseconds >= 0)) throw new RangeError(`advanceClock: milliseconds must be ≥ 0, got ${milliseconds}`)
    this.clock += milliseconds
  }

  /** Records a durable rewrite logged in `sessionId` (it will explain the next break). */
  noteRewrite(sessionId: string, rewrite: LoggedRewrite): void {
    const pending = this.pendingRewrites.get(sessionId) ?? []
    pending.push(rewrite)
    this.pendingRewrites.set(sessionId, pending)
  }

  /** Charges one request and records what happened. */
  observe(request: GenerateOptions): CacheObservation {
    const layout = this.renderer.layout(request)
    const family = familyOf(request)
    let root = this.families.get(family)
    const firstOfFamily = !root
    if (!root) {
      root = { children: new Map(), text: '' }
      this.families.set(family, root)
    }
    const path: TrieNode[] = [root]
    let node = root
    for (const segment of layout.segments) {
      const child = node.children.get(segment.id)
      if (!child) break
      path.push(child)
      node = child
    }
    const depth = path.length - 1
    const next = layout.segments[depth]
    let partial = 0
    if (next) for (const child of node.children.values()) partial = Math.max(partial, commonPrefixLength(next.text, child.text))
    const matchedChars = (layout.offsets[depth] as number) + partial
    const promptChars = layout.offsets[layout.segments.length] as number
    const promptTokens = tokensOf(promptChars)
    const { cachedTokens, cacheWriteTokens } = this.charge(layout, path, matchedChars, promptTokens)
    this.insert(root, layout)
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
      divergence: this.divergence(request, layout, firstOfFamily, depth, matchedChars, promptChars),
    })
    this.list.push(observation)
    this.last = request
    return observation
  }

  private charge(layout: PromptLayout, path: readonly TrieNode[], matchedChars: number, promptTokens: number): { cachedTokens: number; cacheWriteTokens: number } {
    const profile = this.profile
    switch (profile.kind) {
      case 'bytes':
        return { cachedTokens: Math.min(promptTokens, Math.floor(matchedChars / CHARS_PER_TOKEN)), cacheWriteTokens: 0 }
      case 'blocks': {
        const matched = Math.min(Math.floor(matchedChars / CHARS_PER_TOKEN), promptTokens - 1)
        const cached = Math.floor(Math.max(0, matched) / profile.blockTokens) * profile.blockTokens
        return { cachedTokens: cached >= profile.minTokens ? cached : 0, cacheWriteTokens: 0 }
      }
      case 'anthropic': {
        const count = layout.segments.length
        const breakpoints = [...new Set([layout.headSegments - 1, count - 1])].filter((position) => position >= 0)
        let readChars = 0
        let readNode: TrieNode | undefined
        for (const breakpoint of breakpoints) {
          for (let position = breakpoint; position >= Math.max(0, breakpoint - profile.lookbackBlocks + 1); position--) {
            const candidate = path[position + 1]
            if (!candidate || candidate.writtenAt === undefined || this.clock - candidate.writtenAt > profile.ttlMs) continue
            const chars = layout.offsets[position + 1] as number
            if (chars > readChars) {
              readChars = chars
              readNode = candidate
            }
            break
          }
        }
        if (readNode) readNode.writtenAt = this.clock
        const cachedTokens = Math.floor(readChars / CHARS_PER_TOKEN)
        const lastBreakpoint = breakpoints.at(-1)
        const writtenTokens = lastBreakpoint === undefined ? 0 : Math.floor((layout.offsets[lastBreakpoint + 1] as number) / CHARS_PER_TOKEN)
        return { cachedTokens, cacheWriteTokens: writtenTokens >= profile.minTokens ? Math.max(0, writtenTokens - cachedTokens) : 0 }
      }
    }
  }

  private insert(root: TrieNode, layout: PromptLayout): void {
    const profile = this.profile
    const breakpoints = profile.kind === 'anthropic' ? new Set([layout.headSegments - 1, layout.segments.length - 1]) : undefined
    let node = root
    layout.segments.forEach((segment, position) => {
      let child = node.children.get(segment.id)
      if (!child) {
        child = { children: new Map(), text: segment.text }
        node.children.set(segment.id, child)
      }
      // Whole tokens, as `charge` counts the write: a prefix that bills no write stores no entry.
      if (breakpoints?.has(position) && profile.kind === 'anthropic' && Math.floor((layout.offsets[position + 1] as number) / CHARS_PER_TOKEN) >= profile.minTokens) {
        child.writtenAt = this.clock
      }
      node = child
    })
  }

  private sessionFacts(request: GenerateOptions, family: string, layout: PromptLayout): { extendsPrevious: boolean; rewritesSince: readonly LoggedRewrite[] } {
    const sessionId = request.sessionId
    if (sessionId === undefined) return { extendsPrevious: false, rewritesSince: [] }
    const rewritesSince = Object.freeze([...(this.pendingRewrites.get(sessionId) ?? [])])
    if (request.purpose !== 'conversation') return { extendsPrevious: false, rewritesSince }
    const ids = layout.segments.map((segment) => segment.id)
    const previous = this.lastConversation.get(sessionId)
    const extendsPrevious = !!previous && previous.family === family && previous.ids.length < ids.length && previous.ids.every((id, index) => ids[index] === id)
    this.lastConversation.set(sessionId, { family, ids })
    this.pendingRewrites.delete(sessionId)
    return { extendsPrevious, rewritesSince }
  }

  private divergence(request: GenerateOptions, layout: PromptLayout, firstOfFamily: boolean, depth: number, matchedChars: number, promptChars: number): Divergence {
    if (firstOfFamily) {
      const last = this.last
      if (!last) return { part: 'first' }
      const field = ENVELOPE_FIELDS.find((key) => canonicalJson(last[key] ?? null) !== canonicalJson(request[key] ?? null))
      return field ? { part: 'envelope', field } : { part: 'first' }
    }
    if (matchedChars >= promptChars) return { part: 'none' }
    const segment = layout.segments[depth]
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
