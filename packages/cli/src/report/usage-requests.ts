import { RunError } from '../shared/run-error.ts'
import { fieldError, objectField } from './field-error.ts'
import type { ObservedRequest, ReportMarker, RequestTokens } from './report-model.ts'
import { integer } from './report-format.ts'

/**
 * Without the cache ledger a request counts as a break when the tokens it did not read from the
 * cache exceed its prompt's growth over the previous request's by more than this share of its
 * prompt. A request that extends the previous one reads all of the previous prompt (give or take
 * the provider's block rounding); a warm summary call replays a prefix of it and adds only its
 * instruction, a few hundred tokens.
 */
export const USAGE_BREAK_SHARE = 0.05

/** The envelope of the conversation's requests, from the latest `request/header`. */
export interface HeaderEnvelope {
  readonly provider?: string
  readonly model?: string
  readonly reasoningEffort?: string
  readonly temperature?: number
  readonly stop?: readonly string[]
}

/** The envelope fields a summary call must share with the conversation to reuse its cache. */
const ENVELOPE_FIELDS = ['provider', 'model', 'reasoningEffort', 'temperature', 'stop'] as const

/**
 * The request an `assistant/message` (a conversation request) or a `compaction/summary` (a
 * summary call) reports through its provider usage, in a log without the cache ledger. Its break
 * is inferred: when the tokens it did not read from the cache exceed its growth over `previous`'s
 * prompt by more than {@link USAGE_BREAK_SHARE} of its prompt, the cause is the first of what the
 * log recorded since `previous` (`since`): for a summary call, an envelope that differs from
 * `header`; then a fold, a prune, a changed header.
 * @throws RunError naming `where` when the usage or the summary's route is malformed.
 */
export function usageRequest(
  type: 'assistant/message' | 'compaction/summary',
  data: Record<string, unknown>,
  line: number,
  where: string,
  context: {
    previous: ObservedRequest | undefined
    since: readonly ReportMarker[]
    headerChanged: boolean
    header: HeaderEnvelope | undefined
  },
): ObservedRequest {
  const tokens = usageTokens(data.usage, where)
  const summary = type === 'compaction/summary'
  const route = summary
    ? `${text(data.provider, where, 'provider')}/${text(data.model, where, 'model')}`
    : context.header?.provider && context.header.model
      ? `${context.header.provider}/${context.header.model}`
      : null
  const known = tokens.prompt !== null
  const detail = known
    ? `no cache/observation event: the provider usage logged on the ${type} at line ${line}`
    : `no cache/observation event, and the ${type} at line ${line} carries no provider usage`
  const previousPrompt = context.previous?.tokens.prompt ?? null
  const base = { line, purpose: summary ? 'compaction' : 'conversation', route, tokens, detail }
  if (previousPrompt === null || tokens.prompt === null || tokens.cached === null) return { ...base, break: null }
  const missed = tokens.prompt - tokens.cached
  const growth = Math.max(0, tokens.prompt - previousPrompt)
  if (missed - growth <= USAGE_BREAK_SHARE * tokens.prompt) return { ...base, break: null }
  const read =
    `${integer(missed)} of ${integer(tokens.prompt)} prompt tokens were prefilled, not read from the ` +
    `cache (the previous request's prompt had ${integer(previousPrompt)})`
  const drift = summary ? envelopeDrift(data, context.header) : []
  const folds = context.since.filter((marker) => marker.kind === 'fold').length
  const prunes = context.since
    .filter((marker) => marker.kind === 'prune')
    .reduce((sum, marker) => sum + marker.count, 0)
  // What the log records since that request, each with the cause it stands for; the first one is the cause.
  const logged: Array<readonly [cause: string, text: string]> = []
  const verb = drift.length === 1 ? 'differs' : 'differ'
  if (drift.length)
    logged.push(['envelope', `the summary call's ${drift.join(', ')} ${verb} from the conversation's header`])
  if (folds) logged.push(['fold', `${folds} fold(s)`])
  if (prunes) logged.push(['prune', `${prunes} pruned tool result(s)`])
  if (context.headerChanged) logged.push(['envelope', 'a changed request header'])
  const why = logged.length
    ? `since that request the log records ${logged.map(([, text]) => text).join('; ')} (the cause is inferred: ` +
      'without the cache ledger the divergence is not known)'
    : 'nothing logged since that request explains it'
  return { ...base, break: { cause: logged[0]?.[0] ?? 'unknown', explanation: `${read}; ${why}` } }
}

/** The envelope fields a summary call sent that differ from the conversation's header. */
function envelopeDrift(data: Record<string, unknown>, header: HeaderEnvelope | undefined): string[] {
  if (!header) return []
  return ENVELOPE_FIELDS.filter(
    (field) => JSON.stringify(data[field] ?? null) !== JSON.stringify(header[field] ?? null),
  )
}

/** Disjoint token buckets from a logged `TokenUsage` (absent fields stay null, never 0). */
function usageTokens(usage: unknown, where: string): RequestTokens {
  if (usage === undefined) return { prompt: null, cached: null, written: null, uncached: null, output: null }
  const record = objectField(where, 'usage', usage)
  const field = (name: string): number | null => {
    const value = record[name]
    if (value === undefined) return null
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 0)
      throw fieldError(where, `usage.${name}`, 'a token count (an integer ≥ 0)', value)
    return value
  }
  const uncached = field('inputTokens')
  const cached = field('cacheReadTokens')
  const written = field('cacheWriteTokens')
  const prompt =
    uncached === null && cached === null && written === null ? null : (uncached ?? 0) + (cached ?? 0) + (written ?? 0)
  return { prompt, cached, written, uncached, output: field('outputTokens') }
}

/** The envelope of a `request/header` event's `header.config`. */
export function headerEnvelope(data: Record<string, unknown>, where: string): HeaderEnvelope {
  const header = data.header as { config?: unknown } | undefined
  const config = header?.config
  if (typeof config !== 'object' || config === null)
    throw new RunError(`${where}: request/header must carry header.config, got ${JSON.stringify(config)}`)
  return config as HeaderEnvelope
}

function text(value: unknown, where: string, field: string): string {
  if (typeof value !== 'string') throw fieldError(where, `compaction/summary ${field}`, 'a string', value)
  return value
}
