import { describeProfileValue as describe } from './profile-value.ts'

/**
 * How long a provider takes to answer one request, as four figures: a fixed time to first token
 * and three rates (prompt tokens prefilled, prompt tokens read from the cache, output tokens).
 * `requestLatencyMs` turns them into milliseconds. Sources of the built-in figures are in the
 * README's "Latency model" section.
 */
export interface LatencyProfile {
  /** The built-in name, or where the profile was read from (a JSON file's path). */
  readonly name: string
  /**
   * Fixed milliseconds before the first output token of a request whose prompt costs nothing to
   * process: the round trip, the provider's front end and scheduling. Prompt processing comes on
   * top, from the rates below. ≥ 0.
   */
  readonly ttftMs: number
  /** Prompt tokens not read from the cache (prefilled: written to it or not) processed per second. > 0. */
  readonly prefillTokensPerSecond: number
  /** Prompt tokens read from the cache per second. > 0. */
  readonly cachedTokensPerSecond: number
  /** Output tokens generated per second (thinking tokens included when they are counted as output). > 0. */
  readonly decodeTokensPerSecond: number
}

/** The built-in profile names. */
export type LatencyProfileName = 'sonnet-class' | 'opus-class' | 'llama-cpp-local'

/**
 * Built-in profiles. Where a figure is arithmetic from a measurement, the measurement is named;
 * the README's "Latency model" section has the sources with links.
 * - `sonnet-class`: Claude Sonnet 4.6 on Anthropic's API. Anthropic's prompt-caching cookbook
 *   (the claude-sonnet-4-6 version) measured 187,364 prompt tokens with 8 output tokens at 4.89 s
 *   uncached and 1.48 s read from the cache. With `ttftMs` 1,000 (third-party small-prompt medians
 *   0.74–1.21 s) and decode 80 tok/s (the middle of the Sonnet-class 60–100 tok/s), the rest is
 *   3.79 s of prefill (49,400 tok/s, rounded to 50,000) and 0.38 s of cache read (493,000 tok/s,
 *   rounded to 500,000).
 * - `opus-class`: no source times an Opus request against its cache. Decode 40 tok/s
 *   (third-party: Opus 4 about 40, Opus 4.1 45, Opus 4.8 about 30); the other three figures are
 *   `sonnet-class`'s scaled by the same factor as the decode rate (½): an assumption.
 * - `llama-cpp-local`: a 27B-class model on one machine through llama-server. Prefill 1,000
 *   tok/s (llama-server's own timings for Qwen 3.6 27B: 1,035 falling to 980 tok/s from 11k to
 *   18k tokens), decode 37 tok/s (4,790 tokens in 130.3 s, Qwen3.6-27B on llama.cpp), cache reads
 *   80,000 tok/s (a 200k-token prompt reused in 2.5 s, llama.cpp engine under ollama: a lower
 *   bound), `ttftMs` 50 (no network; an identical 20k-token repeat answered in 14 ms on
 *   llama-server, plus one token of a 27B model, 27 ms at 37 tok/s).
 */
export const LATENCY_PROFILES: Readonly<Record<LatencyProfileName, LatencyProfile>> = Object.freeze({
  'sonnet-class': Object.freeze({
    name: 'sonnet-class',
    ttftMs: 1000,
    prefillTokensPerSecond: 50_000,
    cachedTokensPerSecond: 500_000,
    decodeTokensPerSecond: 80,
  }),
  'opus-class': Object.freeze({
    name: 'opus-class',
    ttftMs: 2000,
    prefillTokensPerSecond: 25_000,
    cachedTokensPerSecond: 250_000,
    decodeTokensPerSecond: 40,
  }),
  'llama-cpp-local': Object.freeze({
    name: 'llama-cpp-local',
    ttftMs: 50,
    prefillTokensPerSecond: 1000,
    cachedTokensPerSecond: 80_000,
    decodeTokensPerSecond: 37,
  }),
})

/** The profile `warmfold bench` records unless told otherwise. */
export const DEFAULT_LATENCY_PROFILE: LatencyProfileName = 'sonnet-class'

/** The keys of a latency profile read from JSON, in the order messages list them. */
export const LATENCY_KEYS = [
  'ttftMs',
  'prefillTokensPerSecond',
  'cachedTokensPerSecond',
  'decodeTokensPerSecond',
] as const

/** For help texts. */
export const LATENCY_SYNTAX = `${Object.keys(LATENCY_PROFILES).join(' | ')} | a JSON file`

/**
 * The range each figure of a profile read from JSON must fall in. Outside it the value is a typo
 * or a unit mix-up (seconds for milliseconds, tokens per minute for per second), and values near
 * the largest double (`1e308`) would turn latencies into Infinity or 0:
 * - `ttftMs` from 0 to 3,600,000 (an hour; real ones are tens of milliseconds to a few seconds);
 * - each rate from 0.01 to 100,000,000 tokens per second (one token per 100 s to far beyond any
 *   cache read; real ones are 1 to about 2,000 for decode, hundreds to 100,000 for prefill).
 */
export const LATENCY_LIMITS: Readonly<
  Record<(typeof LATENCY_KEYS)[number], { readonly min: number; readonly max: number; readonly unit: string }>
> = Object.freeze({
  ttftMs: Object.freeze({ min: 0, max: 3_600_000, unit: 'milliseconds' }),
  prefillTokensPerSecond: Object.freeze({ min: 0.01, max: 100_000_000, unit: 'tokens per second' }),
  cachedTokensPerSecond: Object.freeze({ min: 0.01, max: 100_000_000, unit: 'tokens per second' }),
  decodeTokensPerSecond: Object.freeze({ min: 0.01, max: 100_000_000, unit: 'tokens per second' }),
})

const MEANING: Readonly<Record<(typeof LATENCY_KEYS)[number], string>> = {
  ttftMs: 'the fixed time to first token, in milliseconds',
  prefillTokensPerSecond: 'uncached prompt tokens processed per second',
  cachedTokensPerSecond: 'prompt tokens read from the cache per second',
  decodeTokensPerSecond: 'output tokens generated per second',
}

/**
 * Checks a latency profile read from JSON: an object with exactly the four numbers `ttftMs`,
 * `prefillTokensPerSecond`, `cachedTokensPerSecond` and `decodeTokensPerSecond`, each finite and
 * inside {@link LATENCY_LIMITS} (so rates are > 0). `source` names where it came from in every
 * error and becomes the profile's name.
 * @throws TypeError naming `source`, the key and the bad value.
 */
export function latencyProfileFromJson(value: unknown, source: string): LatencyProfile {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TypeError(
      `latency profile ${source} must be a JSON object with the keys ${LATENCY_KEYS.join(', ')}, got ` +
        `${describe(value)}`,
    )
  }
  const record = value as Record<string, unknown>
  const unknown = Object.keys(record).filter((key) => !(LATENCY_KEYS as readonly string[]).includes(key))
  if (unknown.length)
    throw new TypeError(
      `latency profile ${source} has unknown key(s) ${unknown.map((key) => JSON.stringify(key)).join(', ')}; the ` +
        `keys are ${LATENCY_KEYS.join(', ')}`,
    )
  const figure = (key: (typeof LATENCY_KEYS)[number]): number => {
    const number = record[key]
    const { min, max, unit } = LATENCY_LIMITS[key]
    if (number === undefined)
      throw new TypeError(`latency profile ${source} is missing ${JSON.stringify(key)} (${MEANING[key]})`)
    if (typeof number !== 'number' || !Number.isFinite(number) || number < min || number > max) {
      throw new TypeError(
        `latency profile ${source}: ${JSON.stringify(key)} must be a finite number of ${unit} from ${min} to ` +
          `${max}, got ${describe(number)}`,
      )
    }
    return number
  }
  return Object.freeze({
    name: source,
    ttftMs: figure('ttftMs'),
    prefillTokensPerSecond: figure('prefillTokensPerSecond'),
    cachedTokensPerSecond: figure('cachedTokensPerSecond'),
    decodeTokensPerSecond: figure('decodeTokensPerSecond'),
  })
}

/** The built-in profile called `name`, or undefined. */
export function builtinLatencyProfile(name: string): LatencyProfile | undefined {
  return Object.hasOwn(LATENCY_PROFILES, name) ? LATENCY_PROFILES[name as LatencyProfileName] : undefined
}
