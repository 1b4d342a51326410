/**
 * Canned `chat.completion.chunk` streams in the shapes each server documents:
 * - DeepSeek: `reasoning_content` deltas, usage with `prompt_cache_hit_tokens` /
 *   `prompt_cache_miss_tokens` (and the `prompt_tokens_details.cached_tokens` mirror) on the
 *   chunk that carries `finish_reason`.
 * - OpenAI: a trailing usage chunk with `choices: []` and `prompt_tokens_details.cached_tokens`
 *   (plus `cache_write_tokens` on GPT-5.6+).
 * - llama.cpp: a trailing usage chunk with `timings` (`cache_n`, `prompt_n`) and the
 *   `cached_tokens` mirror.
 * - vLLM: a trailing usage chunk without cached tokens (no `--enable-prompt-tokens-details`).
 */

/** A tool call the model makes; `arguments` is streamed in `pieces` fragments, raw. */
export interface ScriptedToolCall {
  readonly id: string
  readonly name: string
  readonly arguments: string
}

/** What one reply says. */
export interface ScriptedTurn {
  readonly reasoning?: string
  readonly text?: string
  readonly toolCalls?: readonly ScriptedToolCall[]
  readonly finishReason?: string
}

const BASE = {
  id: 'chatcmpl-test',
  object: 'chat.completion.chunk',
  created: 1767225600,
  system_fingerprint: 'fp_test',
} as const

/** One chunk for choice 0. */
export function chunk(model: string, delta: object, finishReason: string | null = null, extra: object = {}): object {
  return { ...BASE, model, choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }], ...extra }
}

/** The trailing usage chunk (`choices: []`). */
export function usageChunk(model: string, usage: object, extra: object = {}): object {
  return { ...BASE, model, choices: [], usage, ...extra }
}

/** Splits `text` into two pieces (or one when too short), like a real stream would. */
export function halves(text: string): string[] {
  if (text.length < 2) return [text]
  const middle = Math.floor(text.length / 2)
  return [text.slice(0, middle), text.slice(middle)]
}

/** The content chunks of a turn: role, reasoning, text, tool calls (each by index, arguments in pieces). */
export function contentChunks(
  model: string,
  turn: ScriptedTurn,
  reasoningField: 'reasoning_content' | 'reasoning' = 'reasoning_content',
): object[] {
  const chunks: object[] = [chunk(model, { role: 'assistant', content: '' })]
  for (const piece of turn.reasoning ? halves(turn.reasoning) : [])
    chunks.push(chunk(model, { content: null, [reasoningField]: piece }))
  for (const piece of turn.text ? halves(turn.text) : []) chunks.push(chunk(model, { content: piece }))
  for (const [index, call] of (turn.toolCalls ?? []).entries()) {
    chunks.push(
      chunk(model, {
        tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }],
      }),
    )
    for (const piece of halves(call.arguments))
      chunks.push(chunk(model, { tool_calls: [{ index, function: { arguments: piece } }] }))
  }
  return chunks
}

function finishReasonOf(turn: ScriptedTurn): string {
  return turn.finishReason ?? (turn.toolCalls?.length ? 'tool_calls' : 'stop')
}

/** DeepSeek usage: hit + miss = prompt, the hit mirrored as `cached_tokens`. */
export function deepseekUsage(hit: number, miss: number, completion: number, reasoning: number): object {
  return {
    prompt_tokens: hit + miss,
    completion_tokens: completion,
    total_tokens: hit + miss + completion,
    prompt_tokens_details: { cached_tokens: hit },
    completion_tokens_details: { reasoning_tokens: reasoning },
    prompt_cache_hit_tokens: hit,
    prompt_cache_miss_tokens: miss,
  }
}

/** A DeepSeek stream: usage rides on the `finish_reason` chunk. */
export function deepseekStream(model: string, turn: ScriptedTurn, usage: object): object[] {
  return [...contentChunks(model, turn), chunk(model, { content: '' }, finishReasonOf(turn), { usage })]
}

/** OpenAI usage; `cacheWrite` adds GPT-5.6's `cache_write_tokens`. */
export function openaiUsage(
  prompt: number,
  cached: number,
  completion: number,
  reasoning: number,
  cacheWrite?: number,
): object {
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: {
      cached_tokens: cached,
      audio_tokens: 0,
      ...(cacheWrite === undefined ? {} : { cache_write_tokens: cacheWrite }),
    },
    completion_tokens_details: {
      reasoning_tokens: reasoning,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  }
}

/** An OpenAI stream: `finish_reason` chunk, then a usage chunk with `choices: []`. */
export function openaiStream(model: string, turn: ScriptedTurn, usage: object): object[] {
  return [...contentChunks(model, turn), chunk(model, {}, finishReasonOf(turn)), usageChunk(model, usage)]
}

/** llama-server timings: `cache_n` reused, `prompt_n` processed. */
export function llamacppTimings(cacheN: number, promptN: number, predicted: number): object {
  return {
    cache_n: cacheN,
    prompt_n: promptN,
    prompt_ms: 41.2,
    prompt_per_token_ms: 0.8,
    prompt_per_second: 1200.5,
    predicted_n: predicted,
    predicted_ms: 300.1,
    predicted_per_token_ms: 25,
    predicted_per_second: 40,
  }
}

/** A llama.cpp stream: `finish_reason` chunk with timings, then usage (with the `cached_tokens` mirror) and timings. */
export function llamacppStream(
  model: string,
  turn: ScriptedTurn,
  cacheN: number,
  promptN: number,
  completion: number,
): object[] {
  const usage = {
    completion_tokens: completion,
    prompt_tokens: cacheN + promptN,
    total_tokens: cacheN + promptN + completion,
    prompt_tokens_details: { cached_tokens: cacheN },
  }
  return [
    ...contentChunks(model, turn),
    chunk(model, {}, finishReasonOf(turn)),
    usageChunk(model, usage, { timings: llamacppTimings(cacheN, promptN, completion) }),
  ]
}

/** A vLLM stream without `--enable-prompt-tokens-details`: no cached count at all. */
export function vllmStream(model: string, turn: ScriptedTurn, prompt: number, completion: number): object[] {
  return [
    ...contentChunks(model, turn, 'reasoning'),
    chunk(model, {}, finishReasonOf(turn)),
    usageChunk(model, {
      prompt_tokens: prompt,
      total_tokens: prompt + completion,
      completion_tokens: completion,
      prompt_tokens_details: null,
    }),
  ]
}
