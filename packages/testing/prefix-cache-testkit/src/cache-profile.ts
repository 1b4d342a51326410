/**
 * How a simulated provider cache matches and bills a prefix.
 * - `bytes`: cached = the longest common byte prefix with any earlier request of the family.
 * - `blocks`: hits counted in whole blocks of `blockTokens`, at least `minTokens`, and the last
 *   prompt token never cached (`blocks:16` ≈ vLLM, `blocks:128:1024` ≈ OpenAI).
 * - `anthropic`: writes only at breakpoints, reads look back at most `lookbackBlocks` content
 *   blocks from a breakpoint, at least `minTokens`, entries expire `ttlMs` after last use.
 */
export type CacheProfile =
  | { readonly kind: 'bytes'; readonly name: string }
  | { readonly kind: 'blocks'; readonly name: string; readonly blockTokens: number; readonly minTokens: number }
  | { readonly kind: 'anthropic'; readonly name: string; readonly lookbackBlocks: number; readonly minTokens: number; readonly ttlMs: number }

/** Characters per simulated token. */
export const CHARS_PER_TOKEN = 4

/** Profile names accepted by {@link parseCacheProfile}, for help texts. */
export const PROFILE_SYNTAX = 'bytes | blocks:N[:MIN] | anthropic'

/**
 * Parses `bytes`, `blocks:N`, `blocks:N:MIN` or `anthropic`.
 * @throws TypeError naming the bad value and the accepted forms.
 */
export function parseCacheProfile(value: string): CacheProfile {
  if (value === 'bytes') return { kind: 'bytes', name: 'bytes' }
  if (value === 'anthropic') return { kind: 'anthropic', name: 'anthropic', lookbackBlocks: 20, minTokens: 1024, ttlMs: 5 * 60_000 }
  const match = /^blocks:(\d+)(?::(\d+))?$/.exec(value)
  if (match) {
    const blockTokens = Number(match[1])
    const minTokens = Number(match[2] ?? 0)
    if (blockTokens >= 1) return { kind: 'blocks', name: value, blockTokens, minTokens }
  }
  throw new TypeError(`cache profile ${JSON.stringify(value)} is not valid; use ${PROFILE_SYNTAX} (N ≥ 1)`)
}

/** Simulated tokens of `chars` characters of prompt (rounded up). */
export function tokensOf(chars: number): number {
  return Math.ceil(chars / CHARS_PER_TOKEN)
}
