/**
 * How a simulated provider cache matches and bills a prefix. Every kind has a time-to-live on
 * the virtual clock (`ttlMs`, `Infinity` = never expires): a prefix not sent or read for more
 * than `ttlMs` milliseconds is gone.
 * - `bytes`: cached = the longest live common byte prefix with any earlier request of the family.
 * - `blocks`: hits counted in whole blocks of `blockTokens`, at least `minTokens`, and the last
 *   prompt token never cached (`blocks:16` ≈ vLLM, `blocks:128:1024` ≈ OpenAI).
 * - `anthropic`: writes only at breakpoints, reads look back at most `lookbackBlocks` content
 *   blocks from a breakpoint, at least `minTokens`, entries expire `ttlMs` after last use.
 * - `deepseek`: DeepSeek's context caching on disk: a hit is the longest persisted prefix unit
 *   the request fully matches, in whole storage units of `unitTokens`.
 */
export type CacheProfile =
  | { readonly kind: 'bytes'; readonly name: string; readonly ttlMs: number }
  | {
      readonly kind: 'blocks'
      readonly name: string
      readonly blockTokens: number
      readonly minTokens: number
      readonly ttlMs: number
    }
  | {
      readonly kind: 'anthropic'
      readonly name: string
      readonly lookbackBlocks: number
      readonly minTokens: number
      readonly ttlMs: number
    }
  | { readonly kind: 'deepseek'; readonly name: string; readonly unitTokens: number; readonly ttlMs: number }

/** Characters per simulated token. */
export const CHARS_PER_TOKEN = 4

/** Anthropic's default cache lifetime: 5 minutes. */
export const ANTHROPIC_TTL_MS = 5 * 60_000

/** Anthropic's extended cache lifetime (`anthropic:1h`): 1 hour. */
export const ANTHROPIC_EXTENDED_TTL_MS = 60 * 60_000

/**
 * DeepSeek's default cache lifetime: 3 hours. Its guide says unused cache "will be automatically
 * cleared, usually within a few hours to a few days"; this is that lower bound, "a few hours",
 * read as 3.
 */
export const DEEPSEEK_TTL_MS = 3 * 60 * 60_000

/** DeepSeek's storage unit: "64 tokens as a storage unit; content less than 64 tokens will not be cached". */
export const DEEPSEEK_UNIT_TOKENS = 64

/** Profile names accepted by {@link parseCacheProfile}, for help texts (S = seconds). */
export const PROFILE_SYNTAX = 'bytes[:ttl=S] | blocks:N[:MIN][:ttl=S] | anthropic[:1h|:ttl=S] | deepseek[:ttl=S]'

/**
 * Parses `bytes`, `blocks:N`, `blocks:N:MIN`, `anthropic`, `anthropic:1h` or `deepseek`, each
 * optionally followed by `:ttl=S` (S seconds, a positive finite number; not after `anthropic:1h`).
 * `bytes` and `blocks` never expire unless given a ttl; `anthropic` keeps entries 5 minutes,
 * `anthropic:1h` one hour, `deepseek` 3 hours ({@link DEEPSEEK_TTL_MS}).
 * @throws TypeError naming the bad value and the accepted forms.
 */
export function parseCacheProfile(value: string): CacheProfile {
  const ttlMatch = /^(.*):ttl=([^:]*)$/.exec(value)
  const base = ttlMatch ? (ttlMatch[1] as string) : value
  const ttlMs = ttlMatch ? secondsToMs(value, ttlMatch[2] as string) : undefined
  const name = value
  if (base === 'bytes') return { kind: 'bytes', name, ttlMs: ttlMs ?? Infinity }
  if (base === 'anthropic')
    return { kind: 'anthropic', name, lookbackBlocks: 20, minTokens: 1024, ttlMs: ttlMs ?? ANTHROPIC_TTL_MS }
  if (base === 'anthropic:1h' && ttlMs === undefined)
    return { kind: 'anthropic', name, lookbackBlocks: 20, minTokens: 1024, ttlMs: ANTHROPIC_EXTENDED_TTL_MS }
  if (base === 'deepseek')
    return { kind: 'deepseek', name, unitTokens: DEEPSEEK_UNIT_TOKENS, ttlMs: ttlMs ?? DEEPSEEK_TTL_MS }
  const match = /^blocks:(\d+)(?::(\d+))?$/.exec(base)
  if (match) {
    const blockTokens = Number(match[1])
    const minTokens = Number(match[2] ?? 0)
    if (blockTokens >= 1) return { kind: 'blocks', name, blockTokens, minTokens, ttlMs: ttlMs ?? Infinity }
  }
  throw new TypeError(
    `cache profile ${JSON.stringify(value)} is not valid; use ${PROFILE_SYNTAX} (N ≥ 1, S = seconds > 0)`,
  )
}

function secondsToMs(value: string, seconds: string): number {
  // Decimal notation only: `1e3`, `0x10` or `Infinity` would parse as numbers but read as typos.
  const parsed = /^\d+(?:\.\d+)?$/.test(seconds) ? Number(seconds) : Number.NaN
  if (!(parsed > 0) || !Number.isFinite(parsed)) {
    throw new TypeError(
      `cache profile ${JSON.stringify(value)} is not valid: ttl ${JSON.stringify(seconds)} must be a positive ` +
        `finite number of seconds (e.g. ttl=600); use ${PROFILE_SYNTAX}`,
    )
  }
  return parsed * 1000
}

/** Simulated tokens of `chars` characters of prompt (rounded up). */
export function tokensOf(chars: number): number {
  return Math.ceil(chars / CHARS_PER_TOKEN)
}

/** Whole simulated tokens of `chars` characters (rounded down): what a cache can store or read. */
export function wholeTokensOf(chars: number): number {
  return Math.floor(chars / CHARS_PER_TOKEN)
}
