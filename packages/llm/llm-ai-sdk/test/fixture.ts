import { createAnthropic } from '@ai-sdk/anthropic'
import { createOpenAICompatible } from '@ai-sdk/openai-compatible'
import type { LanguageModelV3 } from '@ai-sdk/provider'
import type { GenerateOptions, StreamChunk } from '@warmfold/llm'
import { createUserMessage, LlmError, LlmRuntime } from '@warmfold/llm'
import type { Responder, TestContext } from '@warmfold/test-utils'
import { createTestContext, RecordingServer } from '@warmfold/test-utils'
import type { AiSdkModelConfig } from '../src/index.ts'
import { AiSdkAdapter } from '../src/index.ts'

export const TEST_KEY = 'sk-aisdk-fixture-key-0123456789'
export const PROVIDER = 'ai'

/** Which AI SDK provider a harness builds. */
export type Kind = 'compat' | 'anthropic'

/** The model id each provider is asked for (on the wire). */
export const WIRE_MODEL: Readonly<Record<Kind, string>> = { compat: 'gpt-test', anthropic: 'claude-test' }

/** An AI SDK model of `kind` talking to `server` (a real HTTP server on 127.0.0.1). */
export function modelFor(kind: Kind, server: RecordingServer, fetch?: typeof globalThis.fetch): LanguageModelV3 {
  if (kind === 'compat') {
    return createOpenAICompatible({
      name: 'compat',
      baseURL: server.baseURL,
      apiKey: TEST_KEY,
      includeUsage: true,
      ...(fetch ? { fetch } : {}),
    }).chatModel(WIRE_MODEL.compat)
  }
  return createAnthropic({ baseURL: server.baseURL, apiKey: TEST_KEY, ...(fetch ? { fetch } : {}) })(
    WIRE_MODEL.anthropic,
  )
}

/** The per-model config of a harness (effort `high` mapped per provider). */
export function modelConfig(kind: Kind, model: LanguageModelV3, extra: Record<string, unknown> = {}): AiSdkModelConfig {
  const effortOptions =
    kind === 'compat'
      ? { high: { compat: { reasoningEffort: 'high' } } }
      : { high: { anthropic: { thinking: { type: 'enabled', budgetTokens: 1024 } } } }
  return {
    model,
    contextWindow: 100_000,
    // Above the Anthropic thinking budget of effort high (1024), which maxTokens includes.
    defaultMaxTokens: 2048,
    efforts: ['off', 'high'],
    defaultEffort: 'off',
    effortOptions,
    ...(kind === 'compat' ? { cache: 'openai-compatible' } : {}),
    ...extra,
  } as unknown as AiSdkModelConfig
}

export interface Harness extends TestContext {
  readonly server: RecordingServer
  readonly kind: Kind
  /** Streams one call through `ctx.llm` and collects its chunks. */
  collect(options?: Partial<GenerateOptions>): Promise<StreamChunk[]>
  /** Runs one call and returns the `LlmError` it threw (fails when it did not throw one). */
  failure(options?: Partial<GenerateOptions>): Promise<LlmError>
  finish(): Promise<void>
}

/** The request every test starts from. */
export function request(extra: Partial<GenerateOptions> = {}): GenerateOptions {
  return { provider: PROVIDER, model: 'main', messages: [createUserMessage('Hello')], ...extra }
}

/** A real runtime with `AiSdkAdapter` wrapping an AI SDK `kind` model pointed at a recording server. */
export async function mount(
  kind: Kind,
  responder: Responder,
  config: Partial<AiSdkAdapter.Config> = {},
  model: Record<string, unknown> = {},
): Promise<Harness> {
  const server = await RecordingServer.start(responder)
  const context = await createTestContext()
  context.ctx.plugin(LlmRuntime)
  context.ctx.plugin(AiSdkAdapter, {
    provider: PROVIDER,
    models: { main: modelConfig(kind, modelFor(kind, server), model) },
    redact: [TEST_KEY],
    retryBaseMs: 1,
    ...config,
  })
  const collect = async (options: Partial<GenerateOptions> = {}) => {
    const chunks: StreamChunk[] = []
    for await (const chunk of context.ctx.llm.stream(request(options))) chunks.push(chunk)
    return chunks
  }
  return Object.assign(context, {
    server,
    kind,
    collect,
    async failure(options: Partial<GenerateOptions> = {}) {
      try {
        await collect(options)
      } catch (error) {
        if (LlmError.isInstance(error)) return error
        throw error
      }
      throw new Error('the call did not fail')
    },
    async finish() {
      await context.ctx.stop()
      await server.close()
    },
  })
}

/** The text of every text-delta chunk, joined. */
export function textOf(chunks: readonly StreamChunk[]): string {
  return chunks.map((chunk) => (chunk.type === 'text-delta' ? chunk.delta : '')).join('')
}
