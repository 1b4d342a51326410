import type { CallConfig } from './call-config.ts'
import type { AdapterModelConfig, ModelInfo } from './model-info.ts'
import { deepFreeze } from './deep-freeze.ts'
import { LlmError } from './llm-error.ts'

/**
 * The frozen {@link ModelInfo} of a model entry as every adapter config holds it: its
 * `contextWindow` and `defaultMaxTokens`, the `cacheTtlMs` and `cachePrices` the adapter knows for
 * it, and, when it lists `efforts`, `reasoning`: the efforts, the default effort and, for efforts
 * whose `reserveOf` is above 0, `outputReserveTokens`.
 */
export function modelInfo(
  model: AdapterModelConfig,
  cache: Pick<ModelInfo, 'cacheTtlMs' | 'cachePrices'> = {},
  reserveOf: (effort: string) => number = () => 0,
): ModelInfo {
  const { efforts, defaultEffort } = model
  const reserves = efforts?.length ? collectOutputReserves(efforts, reserveOf) : undefined
  const reasoning = {
    efforts: [...(efforts ?? [])],
    ...(defaultEffort === undefined ? {} : { defaultEffort }),
    ...(reserves ? { outputReserveTokens: reserves } : {}),
  }
  return deepFreeze({
    contextWindow: model.contextWindow,
    ...(model.defaultMaxTokens === undefined ? {} : { defaultMaxTokens: model.defaultMaxTokens }),
    ...(cache.cacheTtlMs === undefined ? {} : { cacheTtlMs: cache.cacheTtlMs }),
    ...(cache.cachePrices === undefined ? {} : { cachePrices: cache.cachePrices }),
    ...(efforts?.length ? { reasoning } : {}),
  })
}

/**
 * The `reasoning.outputReserveTokens` of a `ModelInfo`: for each of `efforts`, the tokens
 * `reserveOf(effort)` returns, keeping only positive ones (an effort that reserves nothing has no
 * entry). `undefined` when no effort reserves anything, so the field is left out.
 */
export function collectOutputReserves(
  efforts: readonly string[],
  reserveOf: (effort: string) => number,
): Readonly<Record<string, number>> | undefined {
  const reserves: Record<string, number> = {}
  for (const effort of efforts) {
    const reserve = reserveOf(effort)
    if (reserve > 0) reserves[effort] = reserve
  }
  return Object.keys(reserves).length ? reserves : undefined
}

/**
 * The call {@link checkOutputReserve} looks at: its route and effort, for the message, and the output
 * cap the adapter would send (the request's `maxTokens`, else the model's default; `undefined` when it
 * sends none).
 */
export type OutputReserveCall = Pick<CallConfig, 'provider' | 'model' | 'reasoningEffort' | 'maxTokens'>

/**
 * Refuses, before anything is sent, a call whose output cap is at or below the output tokens its
 * effort reserves for reasoning (`reserve`, e.g. Anthropic's `budget_tokens`): the provider rejects
 * such a request (Anthropic), or spends the whole cap on reasoning and returns no answer (Gemini).
 * A call without a cap, or with no reserve, passes. `source` says where the reserve comes from,
 * e.g. `thinkingBudgets.high, sent as thinking.budget_tokens`.
 * @throws LlmError `INVALID_REQUEST` (not retryable) naming the route, both numbers, the effort and `source`.
 */
export function checkOutputReserve(call: OutputReserveCall, reserve: number, source: string): void {
  if (call.maxTokens === undefined || reserve <= 0 || call.maxTokens > reserve) return
  const effort = call.reasoningEffort === undefined ? 'the call' : `reasoningEffort "${call.reasoningEffort}"`
  throw new LlmError(
    'INVALID_REQUEST',
    `${call.provider}/${call.model}: maxTokens ${call.maxTokens} is not above the ${reserve} output tokens ` +
      `${effort} reserves for reasoning (${source}); the provider would reject the request or spend the whole cap ` +
      `on reasoning. Raise maxTokens above ${reserve}, or choose a lower effort`,
    { provider: call.provider, retryable: false },
  )
}
