import type { TokenUsage } from '@warmfold/llm'
import { tokenCount, tokenUsage } from '@warmfold/llm/adapter'

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
  const prompt = tokenCount(raw.promptTokenCount)
  const cached = tokenCount(raw.cachedContentTokenCount)
  const candidates = tokenCount(raw.candidatesTokenCount)
  const thoughts = tokenCount(raw.thoughtsTokenCount)
  return tokenUsage(
    {
      inputTokens: prompt === undefined || cached === undefined ? prompt : Math.max(0, prompt - cached),
      cacheReadTokens: cached,
      outputTokens:
        candidates === undefined && thoughts === undefined ? undefined : (candidates ?? 0) + (thoughts ?? 0),
      reasoningTokens: thoughts,
    },
    raw,
  )
}
