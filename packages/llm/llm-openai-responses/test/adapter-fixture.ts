import type { GenerateOptions, StreamChunk } from '@warmfold/llm'
import { createUserMessage, LlmError, LlmRuntime } from '@warmfold/llm'
import type { Responder, TestContext } from '@warmfold/test-utils'
import { createTestContext, RecordingServer } from '@warmfold/test-utils'
import type { ResponsesModelConfig } from '../src/index.ts'
import { OpenAIResponsesAdapter } from '../src/index.ts'

export const MODEL = 'gpt-test'
export const TEST_KEY = 'sk-proj-fixture-key-0123456789'

/** Models every fixture adapter knows. */
export const MODELS: Record<string, ResponsesModelConfig> = {
  [MODEL]: {
    contextWindow: 400_000,
    defaultMaxTokens: 1024,
    efforts: ['low', 'medium', 'high'],
    defaultEffort: 'medium',
    cacheRetention: '24h',
  },
  'gpt-other': { contextWindow: 128_000 },
}

export interface AdapterHarness extends TestContext {
  server: RecordingServer
  /** Streams one call through `ctx.llm` and collects its chunks. */
  collect(options?: Partial<GenerateOptions>): Promise<StreamChunk[]>
  /** Runs one call and returns the `LlmError` it threw (fails when it did not throw one). */
  failure(options?: Partial<GenerateOptions>): Promise<LlmError>
  dispose(): Promise<void>
}

export function request(options: Partial<GenerateOptions> = {}): GenerateOptions {
  return { provider: 'openai', model: MODEL, messages: [createUserMessage('Hello')], ...options }
}

/** A real runtime with `OpenAIResponsesAdapter` pointed at a recording server answering through `responder`. */
export async function mountAdapter(
  responder: Responder,
  config: Partial<OpenAIResponsesAdapter.Config> = {},
): Promise<AdapterHarness> {
  const server = await RecordingServer.start(responder)
  const context = await createTestContext()
  context.ctx.plugin(LlmRuntime)
  context.ctx.plugin(OpenAIResponsesAdapter, {
    baseURL: server.baseURL,
    apiKey: TEST_KEY,
    models: MODELS,
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
    async dispose() {
      await context.ctx.stop()
      await server.close()
    },
  })
}
