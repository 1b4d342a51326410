import type { GenerateOptions, LlmErrorCode, StreamChunk } from '@warmfold/llm'
import { createUserMessage, LlmError, LlmRuntime } from '@warmfold/llm'
import type { Responder, TestContext } from '@warmfold/test-utils'
import { createTestContext, RecordingServer } from '@warmfold/test-utils'
import { expect } from 'vitest'
import { GoogleAdapter } from '../src/index.ts'

export const MODEL = 'gemini-2.5-flash'
export const MODEL_3 = 'gemini-3-pro-preview'
export const TEST_KEY = 'AIzaSy-fixture-key-0123456789'

/** Models every fixture adapter knows: a 2.5 (budgets) and a 3 (levels) model with family defaults. */
export const MODELS = {
  [MODEL]: { contextWindow: 1_048_576, defaultMaxTokens: 8192 },
  [MODEL_3]: { contextWindow: 1_048_576 },
}

export interface AdapterHarness extends TestContext {
  readonly server: RecordingServer
  /** Streams one call through `ctx.llm` and collects its chunks. */
  collect(options?: Partial<GenerateOptions>): Promise<StreamChunk[]>
  /** Runs one call and returns the `LlmError` it threw with `code`. */
  failure(code: LlmErrorCode, options?: Partial<GenerateOptions>): Promise<LlmError>
}

/** A minimal request. */
export function request(options: Partial<GenerateOptions> = {}): GenerateOptions {
  return { provider: 'google', model: MODEL, messages: [createUserMessage('Hello')], ...options }
}

const harnesses: AdapterHarness[] = []

/** A real runtime with `GoogleAdapter` pointed at a recording server; disposed by {@link disposeAll}. */
export async function mountAdapter(
  responder: Responder,
  config: Record<string, unknown> = {},
): Promise<AdapterHarness> {
  const server = await RecordingServer.start(responder)
  const context = await createTestContext()
  context.ctx.plugin(LlmRuntime)
  context.ctx.plugin(GoogleAdapter, {
    baseURL: server.origin,
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
  const dispose = context.dispose
  const harness: AdapterHarness = Object.assign(context, {
    server,
    collect,
    async failure(code: LlmErrorCode, options: Partial<GenerateOptions> = {}) {
      let caught: unknown
      try {
        await collect(options)
      } catch (error) {
        caught = error
      }
      expect(LlmError.isInstance(caught), `expected an LlmError, got ${String(caught)}`).toBe(true)
      expect((caught as LlmError).code, (caught as LlmError).message).toBe(code)
      return caught as LlmError
    },
    async dispose() {
      await dispose.call(context)
      await server.close()
    },
  })
  harnesses.push(harness)
  return harness
}

/** Disposes every harness mounted so far (call in `afterEach`). */
export async function disposeAll(): Promise<void> {
  for (const harness of harnesses.splice(0)) await harness.dispose()
}
