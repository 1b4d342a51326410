import type { GenerateOptions } from '@warmfold/llm'
import type { TokenMeter } from '@warmfold/token-meter'

/** A summary call is not made when its budget leaves less than this for the checkpoint. */
export const MIN_SUMMARY_OUTPUT_TOKENS = 256

/** Summary calls in one compaction when the provider keeps rejecting the prompt as too long. */
export const SUMMARY_ATTEMPTS = 3

/**
 * After a context-length rejection, the next summary call's prompt estimate + `maxTokens` must
 * fit in this share of the rejected call's: shrinking the prompt alone would not help, because
 * the output cap grows back into the room it frees.
 */
export const SUMMARY_RETRY_RATIO = 0.75

/**
 * Tokens a summary call may spend on prompt estimate + output:
 * `window − ceil(window × marginRatio)`. The margin absorbs a provider tokenizer that counts
 * more than the token meter's estimate (providers check prompt + max_tokens against the window).
 */
export function summaryLimit(contextWindow: number, marginRatio: number): number {
  return contextWindow - Math.ceil(contextWindow * marginRatio)
}

/** A summary request whose output cap fits its budget. */
export interface SizedSummaryRequest {
  readonly request: GenerateOptions
  /** Estimated prompt tokens: system, tools and every message. */
  readonly promptTokens: number
  readonly maxTokens: number
  /**
   * The largest `maxTokens` this prompt allows: what `limitTokens` leaves after the prompt
   * estimate. A retry with a larger cap never asks for more.
   */
  readonly ceilingTokens: number
}

/** Estimated prompt tokens of `request`, priced like the conversation (system, tools, messages). */
export function estimatePrompt(meter: TokenMeter, request: GenerateOptions): number {
  return (
    meter.estimateSystem(request.system) +
    meter.estimateTools(request.tools) +
    request.messages.reduce((sum, message) => sum + meter.estimateMessage(message), 0)
  )
}

/**
 * Sets the request's `maxTokens` to its summary budget plus `reserveTokens` (the output its
 * effort spends or requires before answer text, e.g. a thinking budget), capped at what
 * `limitTokens` leaves after the prompt estimate. Only the output budget changes, never prompt
 * bytes.
 * @returns the sized request, or why no call should be made (the prompt leaves less than
 *   `reserveTokens` + {@link MIN_SUMMARY_OUTPUT_TOKENS} for the checkpoint).
 */
export function sizeSummaryRequest(
  meter: TokenMeter,
  request: GenerateOptions,
  limitTokens: number,
  reserveTokens = 0,
): SizedSummaryRequest | string {
  const promptTokens = estimatePrompt(meter, request)
  const room = limitTokens - promptTokens
  if (room < reserveTokens + MIN_SUMMARY_OUTPUT_TOKENS) {
    const reserve = reserveTokens > 0 ? ` above the ${reserveTokens}-token output reserve of its reasoning effort` : ''
    return (
      `the summary prompt (about ${promptTokens} tokens) leaves ${Math.max(0, room)} of its ` +
      `${limitTokens}-token budget for the checkpoint; at least ${MIN_SUMMARY_OUTPUT_TOKENS}${reserve} are needed`
    )
  }
  const maxTokens = request.maxTokens === undefined ? room : Math.min(request.maxTokens + reserveTokens, room)
  return { request: { ...request, maxTokens }, promptTokens, maxTokens, ceilingTokens: room }
}
