import type { GenerateOptions, LlmAdapter } from '@warmfold/llm'
import { canonicalJson, reasoningBlock } from '@warmfold/llm'
import { AnthropicLlmAdapter, parseAnthropicConfig } from '@warmfold/llm-anthropic'
import { ChatCompletionsAdapter, parseOpenAICompatibleConfig } from '@warmfold/llm-openai-compatible'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Kind } from '../../../../../llm/llm-ai-sdk/test/fixture.ts'
import { TEST_KEY, WIRE_MODEL } from '../../../../../llm/llm-ai-sdk/test/fixture.ts'
import type { WireBench } from '../../../../../llm/llm-ai-sdk/test/wire.ts'
import { rich, wireBench } from '../../../../../llm/llm-ai-sdk/test/wire.ts'

// The AI SDK adapter's bodies against those of warmfold's direct adapters for the same options on
// the same server. Its own wire tests (snapshots, byte-identical bodies) are in
// packages/llm/llm-ai-sdk/test/wire.test.ts.

const KINDS = ['compat', 'anthropic'] as const
const benches = {} as Record<Kind, WireBench>
beforeAll(async () => {
  for (const kind of KINDS) benches[kind] = await wireBench(kind)
})
afterAll(async () => {
  for (const kind of KINDS) await benches[kind].close()
})

/** warmfold's direct adapter for `kind`'s wire format, talking to `server`. */
function directAdapter(kind: Kind, baseURL: string): LlmAdapter {
  return kind === 'compat'
    ? new ChatCompletionsAdapter({
        ...parseOpenAICompatibleConfig({
          provider: 'direct',
          baseURL,
          dialect: 'openai',
          models: { [WIRE_MODEL.compat]: { contextWindow: 100_000, efforts: ['off', 'high'] } },
        }),
        apiKey: TEST_KEY,
      })
    : new AnthropicLlmAdapter(
        parseAnthropicConfig({
          provider: 'direct',
          baseURL,
          apiKey: TEST_KEY,
          models: {
            [WIRE_MODEL.anthropic]: { contextWindow: 100_000, defaultMaxTokens: 2048, efforts: ['off', 'high'] },
          },
          thinkingBudgets: { high: 1024 },
        }),
        TEST_KEY,
      )
}

/** The raw body the direct adapter sends for `options` (model id = the wire model). */
function directBody(kind: Kind, options: GenerateOptions): Promise<string> {
  const bench = benches[kind]
  return bench.bodyOf(directAdapter(kind, bench.server.baseURL), {
    ...options,
    provider: 'direct',
    model: WIRE_MODEL[kind],
  })
}

describe('compared with the direct adapters (same options, same server)', () => {
  it('@ai-sdk/openai-compatible sends what ChatCompletionsAdapter sends, apart from the documented differences', async () => {
    const viaAiSdk = JSON.parse(await benches.compat.viaAiSdk(rich('compat')))
    const viaDirect = JSON.parse(await directBody('compat', rich('compat')))
    expect(differingKeys(viaAiSdk, viaDirect)).toEqual(['max_completion_tokens', 'max_tokens', 'messages'])
    // The AI SDK names the output cap max_tokens (the direct adapter max_completion_tokens) and
    // replays reasoning as reasoning_content; both send the same session prompt_cache_key.
    expect(viaAiSdk.max_tokens).toBe(viaDirect.max_completion_tokens)
    expect(viaAiSdk.prompt_cache_key).toMatch(/^warmfold-[0-9a-f]{32}$/)
    expect(viaAiSdk.prompt_cache_key).toBe(viaDirect.prompt_cache_key)
    const withoutReasoning = viaAiSdk.messages.map(
      ({ reasoning_content: _reasoning, ...message }: Record<string, unknown>) => message,
    )
    expect(canonicalJson(withoutReasoning)).toBe(canonicalJson(viaDirect.messages))
    expect(viaAiSdk.messages[2].reasoning_content).toBe('I should read it.')
    // The raw argument string reaches the wire byte for byte through both.
    expect(viaAiSdk.messages[2].tool_calls[0].function.arguments).toBe('{"path": "a.ts",  "z":1}')
    expect(canonicalJson(viaAiSdk.tools)).toBe(canonicalJson(viaDirect.tools))
  })

  it('@ai-sdk/anthropic sends what AnthropicLlmAdapter sends, apart from the documented differences', async () => {
    const viaAiSdk = JSON.parse(await benches.anthropic.viaAiSdk(rich('anthropic')))
    const options = rich('anthropic')
    const direct = {
      ...options,
      messages: options.messages.map((message) => ({
        ...message,
        content: message.content.map((block) =>
          block.type === 'reasoning' ? reasoningBlock(block.text, 'sig-1') : block,
        ),
      })),
    }
    const viaDirect = JSON.parse(await directBody('anthropic', direct))
    expect(differingKeys(viaAiSdk, viaDirect)).toEqual(['messages', 'temperature', 'tools'])
    // The provider adds the thinking budget to maxOutputTokens, which the adapter took off maxTokens:
    // both send max_tokens = maxTokens, thinking included. The provider drops temperature while
    // thinking is on, marks every tool eager_input_streaming, and sends a text-only tool result as a string.
    expect(viaAiSdk.max_tokens).toBe(1524)
    expect(viaDirect.max_tokens).toBe(1524)
    expect(viaAiSdk.thinking).toEqual({ type: 'enabled', budget_tokens: 1024 })
    expect(viaAiSdk).not.toHaveProperty('temperature')
    expect(
      viaAiSdk.tools.map(({ eager_input_streaming, ...tool }: Record<string, unknown>) => [
        eager_input_streaming,
        canonicalJson(tool),
      ]),
    ).toEqual(viaDirect.tools.map((tool: unknown) => [true, canonicalJson(tool)]))
    const asArrays = viaAiSdk.messages.map((message: { role: string; content: Array<Record<string, unknown>> }) => ({
      ...message,
      content: message.content.map((block) =>
        block.type === 'tool_result' && typeof block.content === 'string'
          ? { ...block, content: [{ type: 'text', text: block.content }] }
          : block,
      ),
    }))
    expect(canonicalJson(asArrays)).toBe(canonicalJson(viaDirect.messages))
    // The same two breakpoints: end of the system prompt, last block of the last message.
    expect(viaAiSdk.system).toEqual(viaDirect.system)
    expect((await benches.anthropic.viaAiSdk(options)).split('"cache_control"')).toHaveLength(3)
  })
})

function differingKeys(left: Record<string, unknown>, right: Record<string, unknown>): string[] {
  const keys = new Set([...Object.keys(left), ...Object.keys(right)])
  return [...keys].filter((key) => canonicalJson(left[key] ?? null) !== canonicalJson(right[key] ?? null)).toSorted()
}
