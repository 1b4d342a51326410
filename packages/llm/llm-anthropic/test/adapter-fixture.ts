import type { GenerateOptions, StreamChunk } from '@warmfold/llm'
import { createUserMessage, LlmError, LlmRuntime } from '@warmfold/llm'
import type { TestContext } from '@warmfold/test-utils'
import { createTestContext } from '@warmfold/test-utils'
import { AnthropicAdapter } from '../src/index.ts'
import type { AnthropicTestServer, Responder } from './anthropic-test-server.ts'
import { startAnthropicServer } from './anthropic-test-server.ts'

export const MODEL = 'claude-test'
export const TEST_KEY = 'sk-ant-fixture-key-0123456789'

/** Models every fixture adapter knows. */
export const MODELS = {
  [MODEL]: { contextWindow: 200_000, defaultMaxTokens: 1024, efforts: ['off', 'low', 'high'], defaultEffort: 'off' },
  'claude-other': { contextWindow: 100_000, defaultMaxTokens: 512 },
}

export interface AdapterHarness extends TestContext {
  server: AnthropicTestServer
  /** Streams one call through `ctx.llm` and collects its chunks. */
  collect(options?: Partial<GenerateOptions>): Promise<StreamChunk[]>
  /** Runs one call and returns the `LlmError` it threw (fails when it did not throw one). */
  failure(options?: Partial<GenerateOptions>): Promise<LlmError>
  dispose(): Promise<void>
}

function request(options: Partial<GenerateOptions>): GenerateOptions {
  return { provider: 'anthropic', model: MODEL, messages: [createUserMessage('Hello')], ...options }
}

/** A real runtime with `AnthropicAdapter` pointed at a recording server answering through `responder`. */
export async function mountAdapter(
  responder: Responder,
  config: Record<string, unknown> = {},
): Promise<AdapterHarness> {
  const server = await startAnthropicServer(responder)
  const context = await createTestContext()
  context.ctx.plugin(LlmRuntime)
  context.ctx.plugin(AnthropicAdapter, {
    baseURL: server.url,
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

/** The number of `cache_control` occurrences in a raw request body. */
export function breakpointCount(rawBody: string): number {
  return rawBody.split('"cache_control"').length - 1
}
