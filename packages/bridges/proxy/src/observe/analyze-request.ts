import type { PromptDivergence, PromptLayout, SeenRequest } from '@warmfold/cache-ledger/prefix'
import { compareSeenRequests, describeDivergence, formatCount, providerMissed } from '@warmfold/cache-ledger/prefix'
import type { ProviderUsage } from '../proxy-exchange.ts'

/**
 * Why a request could not read the prefix it was compared with (the session's last conversation
 * request): `none` (nothing broke), `first` (nothing to compare with), `fold` (the history was
 * replaced after a summary request of the session), `prune` (a tool result was rewritten),
 * `tools`, `system`, `envelope` (a prompt-shaping setting: another cache family), `expired`
 * (idle longer than the cache TTL), `provider` (the prefix was byte-identical but the provider
 * reported fewer cached tokens than predicted), `unknown` (an earlier message changed otherwise).
 */
export type ObservedCause =
  | 'none'
  | 'first'
  | 'fold'
  | 'prune'
  | 'tools'
  | 'system'
  | 'envelope'
  | 'expired'
  | 'provider'
  | 'unknown'

/** What the provider is told the break was when the prefix cannot explain it. */
export const PROVIDER_SIDE = 'provider side: TTL, eviction or routing'

/** The request a new one is compared with. */
export interface ComparedRequest {
  readonly id: number
  readonly seen: SeenRequest
  /** When it was forwarded (ms). */
  readonly at: number
}

/** How one request's prompt compares with the request before it, and what that predicts. */
export interface PromptAnalysis {
  /** Characters of its canonical prompt (tools, system, messages in provider render order). */
  readonly promptChars: number
  /** Characters of its prompt before the first divergent byte from the compared request (0: none). */
  readonly predictedCachedChars: number
  readonly predictedCachedTokens: number
  /**
   * How characters became tokens: `reported` (at the request's own reported input tokens per
   * prompt character) or `chars/4` (no usage reported).
   */
  readonly tokenScale: 'reported' | 'chars/4'
  /** The request compared with, or null (`first`). */
  readonly comparedWith: number | null
  readonly divergence: PromptDivergence
  /** {@link describeDivergence}'s phrase for it. */
  readonly phrase: string
  readonly cause: ObservedCause
  /** One sentence: where and why. */
  readonly explanation: string
  /** Tokens of the compared prompt the request had to prefill again because of the break (0 without one). */
  readonly lostTokens: number
}

/** What {@link analyzePrompt} needs besides the two requests. */
export interface AnalysisContext {
  readonly usage: ProviderUsage | undefined
  /** A summary request was observed in the session since `compared`. */
  readonly summarySince: boolean
  readonly cacheTtlMs: number
  readonly providerToleranceTokens: number
}

/**
 * Compares `current` with `compared` (undefined: the first of its session) as a provider's prefix
 * cache sees them, predicts its cached tokens from the first divergent byte, and names the cause.
 */
export function analyzePrompt(
  current: SeenRequest,
  at: number,
  compared: ComparedRequest | undefined,
  context: AnalysisContext,
): PromptAnalysis {
  const promptChars = charsOf(current.layout)
  const { usage } = context
  const reported = usage !== undefined && usage.inputTokens > 0 && promptChars > 0
  const scale = reported ? usage.inputTokens / promptChars : 0.25
  const tokens = (chars: number) => Math.round(chars * scale)
  const tokenScale = reported ? ('reported' as const) : ('chars/4' as const)
  const { divergence, changes } = compared
    ? compareSeenRequests(current, compared.seen)
    : { divergence: { part: 'first' } as PromptDivergence, changes: [] }
  const phrase = describeDivergence(divergence)
  // Keys in the exchange log's order: the log record spreads the analysis as it is.
  const result = (cause: ObservedCause, explanation: string, predictedChars: number, lost: number) => ({
    promptChars,
    predictedCachedChars: predictedChars,
    predictedCachedTokens: tokens(predictedChars),
    tokenScale,
    comparedWith: compared?.id ?? null,
    divergence,
    phrase,
    cause,
    explanation,
    lostTokens: Math.max(0, Math.round(lost)),
  })
  if (!compared) return result('first', `${phrase} in its session`, 0, 0)
  const sameFamily = current.family === compared.seen.family
  const sharedChars = sameFamily ? (divergence.charOffset ?? 0) : 0
  const comparedChars = charsOf(compared.seen.layout)
  const idleMs = at - compared.at
  if (idleMs > context.cacheTtlMs)
    return result(
      'expired',
      `idle ${formatCount(Math.round(idleMs / 1000))} s since request ${compared.id}, longer than the cache TTL ` +
        `(${formatCount(Math.round(context.cacheTtlMs / 1000))} s); ${phrase}`,
      0,
      tokens(Math.min(sharedChars, comparedChars)),
    )
  const lost = tokens(comparedChars - sharedChars)
  if (!sameFamily || changes.some((change) => change.startsWith('envelope:')))
    return result('envelope', phrase, sharedChars, lost)
  if (divergence.part === 'tools') return result('tools', phrase, sharedChars, lost)
  if (divergence.part === 'system') return result('system', phrase, sharedChars, lost)
  if (changes.includes('messages')) {
    // A tool result rewritten in place is a prune even after a summary request; a fold replaces history otherwise.
    if (rewroteToolResult(current.layout, compared.seen.layout))
      return result('prune', `${phrase}: a tool result was rewritten`, sharedChars, lost)
    if (context.summarySince)
      return result(
        'fold',
        `${phrase}: the history was replaced after a summary request of this session`,
        sharedChars,
        lost,
      )
    return result('unknown', `${phrase}: an earlier message was changed or removed`, sharedChars, lost)
  }
  const predicted = tokens(sharedChars)
  if (
    usage !== undefined &&
    providerMissed(
      { expectedChars: sharedChars, promptChars, promptTokens: usage.inputTokens, cachedTokens: usage.cacheReadTokens },
      context.providerToleranceTokens,
    )
  )
    return result(
      'provider',
      `${PROVIDER_SIDE}: the prompt repeats request ${compared.id} byte for byte up to char ` +
        `${formatCount(sharedChars)} (${formatCount(predicted)} tokens predicted), the provider read ` +
        `${formatCount(usage.cacheReadTokens)} from its cache`,
      sharedChars,
      predicted - usage.cacheReadTokens,
    )
  return result('none', phrase, sharedChars, 0)
}

/** Characters of `layout`'s whole prompt. */
export function charsOf(layout: PromptLayout): number {
  return layout.offsets[layout.segments.length] as number
}

/** A message's canonical JSON that is a tool's result, in any of the four APIs. */
const TOOL_RESULT = /"role":"tool"|"type":"function_call_output"|"type":"tool_result"|"functionResponse"/

/** Whether the first message where `current` departs from `previous` is a tool result in both (rewritten in place). */
function rewroteToolResult(current: PromptLayout, previous: PromptLayout): boolean {
  const a = current.segments.slice(current.headSegments)
  const b = previous.segments.slice(previous.headSegments)
  let position = 0
  while (position < a.length && position < b.length && a[position]?.id === b[position]?.id) position++
  const left = a[position]
  const right = b[position]
  return left !== undefined && right !== undefined && TOOL_RESULT.test(left.text) && TOOL_RESULT.test(right.text)
}
