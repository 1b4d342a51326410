import type { CompletionResult } from './llama-cache-engine.ts'

/** OpenAI `usage`, with the cached share where OpenAI and llama-server put it. */
export interface WireUsage {
  readonly prompt_tokens: number
  readonly completion_tokens: number
  readonly total_tokens: number
  readonly prompt_tokens_details: { readonly cached_tokens: number }
}

/** llama-server's `timings` object (same field names). */
export interface WireTimings {
  /** Prompt tokens reused from the slot's KV cache. */
  readonly cache_n: number
  /** Prompt tokens evaluated for this request; always `prompt_tokens - cache_n`. */
  readonly prompt_n: number
  readonly prompt_ms: number
  readonly prompt_per_token_ms: number
  readonly prompt_per_second: number
  readonly predicted_n: number
  readonly predicted_ms: number
  readonly predicted_per_token_ms: number
  readonly predicted_per_second: number
}

/** The OpenAI error envelope llama-server answers with. */
export interface WireError {
  readonly error: {
    readonly code: number
    readonly type: string
    readonly message: string
    readonly [extra: string]: unknown
  }
}

const round = (value: number): number => Math.round(value * 1000) / 1000
const perToken = (milliseconds: number, tokens: number): number => (tokens > 0 ? round(milliseconds / tokens) : 0)
const perSecond = (milliseconds: number, tokens: number): number =>
  milliseconds > 0 ? round((tokens * 1000) / milliseconds) : 0

export function wireUsage(result: CompletionResult): WireUsage {
  return {
    prompt_tokens: result.promptTokens,
    completion_tokens: result.completionTokens,
    total_tokens: result.promptTokens + result.completionTokens,
    prompt_tokens_details: { cached_tokens: result.cachedTokens },
  }
}

export function wireTimings(result: CompletionResult): WireTimings {
  return {
    cache_n: result.cachedTokens,
    prompt_n: result.evaluatedTokens,
    prompt_ms: round(result.promptMs),
    prompt_per_token_ms: perToken(result.promptMs, result.evaluatedTokens),
    prompt_per_second: perSecond(result.promptMs, result.evaluatedTokens),
    predicted_n: result.completionTokens,
    predicted_ms: round(result.predictedMs),
    predicted_per_token_ms: perToken(result.predictedMs, result.completionTokens),
    predicted_per_second: perSecond(result.predictedMs, result.completionTokens),
  }
}

export function wireError(code: number, type: string, message: string, extra: Record<string, unknown> = {}): WireError {
  return { error: { code, type, message, ...extra } }
}

/** Identity of one response: the same `id`, `created` and `model` go on every chunk of a stream. */
export interface ResponseIdentity {
  readonly id: string
  readonly created: number
  readonly model: string
}

/** What every body and chunk of a response starts with, in this key order. */
function head(identity: ResponseIdentity, object: string): Record<string, unknown> {
  return { id: identity.id, object, created: identity.created, model: identity.model }
}

/** A non-streamed `chat.completion` body. */
export function completionBody(identity: ResponseIdentity, result: CompletionResult): Record<string, unknown> {
  return {
    ...head(identity, 'chat.completion'),
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: result.text },
        logprobs: null,
        finish_reason: result.finishReason,
      },
    ],
    usage: wireUsage(result),
    timings: wireTimings(result),
  }
}

/** A `chat.completion.chunk` with one choice. `usage: null` is present when usage was requested, as OpenAI does. */
export function choiceChunk(
  identity: ResponseIdentity,
  delta: Record<string, unknown>,
  finishReason: 'stop' | 'length' | null,
  includeUsage: boolean,
): Record<string, unknown> {
  return {
    ...head(identity, 'chat.completion.chunk'),
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    ...(includeUsage ? { usage: null } : {}),
  }
}

/** The last chunk of a stream with `include_usage`: empty `choices`, the usage, and llama-server's timings. */
export function usageChunk(identity: ResponseIdentity, result: CompletionResult): Record<string, unknown> {
  return {
    ...head(identity, 'chat.completion.chunk'),
    choices: [],
    usage: wireUsage(result),
    timings: wireTimings(result),
  }
}
