import type { TokenUsage } from '@warmfold/llm'

/** `usageMetadata` as Gemini sends it on a stream chunk. */
export type GeminiUsage = { readonly [field: string]: unknown }

/**
 * Maps Gemini `usageMetadata` to disjoint {@link TokenUsage} buckets:
 *
 * - `cachedContentTokenCount` → `cacheReadTokens` (implicit or explicit cache hits);
 * - `inputTokens` = `promptTokenCount` − `cachedContentTokenCount`, because `promptTokenCount`
 *   counts the whole prompt, cached part included;
 * - `outputTokens` = `candidatesTokenCount` + `thoughtsTokenCount`: the API's `totalTokenCount` is
 *   the sum of prompt, candidates, tool-use prompt and thoughts, so candidates exclude thoughts;
 * - `reasoningTokens` = `thoughtsTokenCount`.
 *
 * Gemini has no cache write charge, so `cacheWriteTokens` stays `undefined`. A field that is
 * absent or not a finite count stays `undefined` (a sum is only made when every part of it was
 * reported, except that absent thoughts on a model that did not think add nothing). `raw` is the
 * object as received; `toolUsePromptTokenCount` (server-side tools) stays there only.
 */
export function mapUsage(raw: GeminiUsage | undefined): TokenUsage | undefined {
  if (!raw) return undefined
  const prompt = count(raw.promptTokenCount)
  const cached = count(raw.cachedContentTokenCount)
  const candidates = count(raw.candidatesTokenCount)
  const thoughts = count(raw.thoughtsTokenCount)
  const usage: { -readonly [K in keyof TokenUsage]: TokenUsage[K] } = {}
  if (prompt !== undefined) usage.inputTokens = cached === undefined ? prompt : Math.max(0, prompt - cached)
  if (cached !== undefined) usage.cacheReadTokens = cached
  if (candidates !== undefined || thoughts !== undefined) usage.outputTokens = (candidates ?? 0) + (thoughts ?? 0)
  if (thoughts !== undefined) usage.reasoningTokens = thoughts
  usage.raw = raw
  return usage
}

function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined
}
