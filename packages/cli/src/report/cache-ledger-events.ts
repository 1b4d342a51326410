// The one module of the report that knows the fields of the cache ledger's events: the rest of
// the report reads requests, breaks and guard findings in its own terms (report-model.ts).
import type { CacheDivergence } from '@warmfold/cache-ledger'
import { DEFAULT_CACHE_TTL_MS } from '@warmfold/cache-ledger/prefix'
import type { SessionEventMap } from '@warmfold/session'
import { fieldError, numberField, objectField } from './field-error.ts'
import type { ObservedRequest, RequestTokens } from './report-model.ts'

type Observation = SessionEventMap['cache/observation']
type Guard = SessionEventMap['cache/guard']

/** What each break cause means, in the words the report uses. */
const CAUSES: Readonly<Record<string, string>> = {
  fold: 'a fold replaced old history with a checkpoint',
  prune: 'a tool result was rewritten (pruned)',
  fork: "a fork's first request did not read the parent request it replays",
  envelope: 'a prompt-shaping setting changed (effort, temperature, stop, model or provider)',
  tools: 'the tool definitions changed',
  expired: "the prefix was idle longer than the provider's cache TTL",
  provider: 'the prefix was identical, but the provider reported a miss (eviction, routing, lag)',
  unknown: 'the prompt changed without a logged reason',
}

/**
 * The cache TTL the idle rule compares with when the provider has none in the cache ledger's
 * defaults: 5 minutes, the shortest in common use (Anthropic's default, OpenAI's in-memory cache).
 */
const FALLBACK_CACHE_TTL_MS = 5 * 60_000

/** Share of the cache TTL from which the idle time is worth printing: an entry this old may be gone. */
const IDLE_SHARE_OF_TTL = 0.5

/**
 * Whether the idle time since the family's previous request can explain a miss, so the report
 * prints it: when the cause is `expired`, or when the idle time is at least
 * {@link IDLE_SHARE_OF_TTL} of the provider's cache TTL (the cache ledger's default for it:
 * Anthropic and OpenAI 5 minutes, DeepSeek 3 hours; {@link FALLBACK_CACHE_TTL_MS} for any other).
 * A request sent seconds after the previous one says nothing about the cache by its idle time.
 */
function idleTimeMatters(cause: string, idleMs: number, provider: string): boolean {
  if (cause === 'expired') return true
  const ttlMs = Object.hasOwn(DEFAULT_CACHE_TTL_MS, provider)
    ? (DEFAULT_CACHE_TTL_MS[provider] as number)
    : FALLBACK_CACHE_TTL_MS
  return idleMs >= IDLE_SHARE_OF_TTL * ttlMs
}

/**
 * The request a `cache/observation` event reports, with its break (any cause but `none`). Its
 * detail names the idle time only when {@link idleTimeMatters}.
 * @param where `file:line`, for errors.
 * @throws RunError naming `where` and the field when the event is not what the ledger writes.
 */
export function readObservation(data: unknown, line: number, where: string): ObservedRequest {
  const event = objectField(where, 'cache/observation', data) as unknown as Observation
  const purpose = text(event.purpose, where, 'purpose')
  const provider = text(event.provider, where, 'provider')
  const route = `${provider}/${text(event.model, where, 'model')}`
  const divergence = readDivergence(event.divergence, where)
  const cause = text(event.cause, where, 'cause')
  const promptChars = count(event.chars, where, 'chars')
  const expectedChars = count(event.expected, where, 'expected')
  const idleMs = event.idleMs === null ? null : count(event.idleMs, where, 'idleMs')
  const tokens = observedTokens(event, where)
  const parts = [
    `${divergenceText(divergence)}; expected reusable prefix ${expectedChars.toLocaleString('en-US')} of ` +
      `${promptChars.toLocaleString('en-US')} characters`,
  ]
  if (idleMs !== null && idleTimeMatters(cause, idleMs, provider))
    parts.push(`idle ${idleText(idleMs)} since the family's previous request`)
  const detail = parts.join('; ')
  const explanation = `${CAUSES[cause] ?? `cause ${JSON.stringify(cause)}`}: ${detail}`
  return { line, purpose, route, tokens, break: cause === 'none' ? null : { cause, explanation }, detail }
}

/** `15 s`, `7.5 min`, `3.2 h`. */
function idleText(idleMs: number): string {
  if (idleMs < 120_000) return `${oneDecimal(idleMs / 1000)} s`
  if (idleMs < 2 * 60 * 60_000) return `${oneDecimal(idleMs / 60_000)} min`
  return `${oneDecimal(idleMs / (60 * 60_000))} h`
}

/** `2.5`, `10`, `1,234.5`. */
function oneDecimal(value: number): string {
  return value.toLocaleString('en-US', { maximumFractionDigits: 1 })
}

/**
 * A `cache/guard` finding: what the summary call would have differed in, and what was done.
 * @throws RunError naming `where` and the field.
 */
export function readGuard(data: unknown, where: string): { action: string; route: string; text: string } {
  const event = objectField(where, 'cache/guard', data) as unknown as Guard
  const action = text(event.action, where, 'action')
  const provider = text(event.provider, where, 'provider')
  const route = `${provider}/${text(event.model, where, 'model')}`
  const reason = text(event.reason, where, 'reason')
  return { action, route, text: `${reason} (${divergenceText(readDivergence(event.divergence, where))})` }
}

/**
 * Token buckets of an observation. The ledger writes the provider's disjoint buckets (`uncached`
 * billed at the full price, `cached` read, `written` to the cache, `output`) and leaves out a
 * bucket the provider did not report; the prompt is the sum of the three prompt buckets, unknown
 * when none was reported.
 */
function observedTokens(event: Observation, where: string): RequestTokens {
  const cached = tokens(event.cached, where, 'cached')
  const written = tokens(event.written, where, 'written')
  const uncached = tokens(event.uncached, where, 'uncached')
  const output = tokens(event.output, where, 'output')
  const parts = [uncached, cached, written]
  const prompt = parts.every((part) => part === null) ? null : parts.reduce<number>((sum, part) => sum + (part ?? 0), 0)
  return { prompt, cached, written, uncached, output }
}

function readDivergence(value: unknown, where: string): CacheDivergence {
  const divergence = objectField(where, 'divergence', value) as unknown as CacheDivergence
  text(divergence.part, where, 'divergence.part')
  return divergence
}

/** Where the prompt first differed, in words. */
function divergenceText(divergence: CacheDivergence): string {
  const at =
    typeof divergence.charOffset === 'number' ? ` at character ${divergence.charOffset.toLocaleString('en-US')}` : ''
  switch (divergence.part) {
    case 'first':
      return 'first request of its cache family'
    case 'none':
      return 'the whole prompt matched an earlier request of its family'
    case 'envelope':
      return `the envelope differs from the previous request: ${divergence.field ?? 'a setting'}`
    case 'system':
      return `the system prompt differs${at}`
    case 'tools':
      return `tools[${divergence.index ?? '?'}] differs${at}`
    case 'message':
      return `messages[${divergence.index ?? '?'}]${divergence.role ? ` (${divergence.role})` : ''} differs${at}`
    default:
      return `diverges in ${JSON.stringify(divergence.part)}${at}`
  }
}

function text(value: unknown, where: string, field: string): string {
  if (typeof value !== 'string') throw fieldError(where, `cache event field "${field}"`, 'a string', value)
  return value
}

function count(value: unknown, where: string, field: string): number {
  return numberField(where, `cache event field "${field}"`, value)
}

function tokens(value: unknown, where: string, field: string): number | null {
  if (value === undefined) return null
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0)
    throw fieldError(where, `cache event field "${field}"`, 'a token count (an integer ≥ 0) when present', value)
  return value
}
