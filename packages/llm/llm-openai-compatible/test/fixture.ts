import type { GenerateOptions, LlmErrorCode, StreamChunk } from '@warmfold/llm'
import { createUserMessage, LlmError, LlmRuntime } from '@warmfold/llm'
import type { Responder, TestContext } from '@warmfold/test-utils'
import { createTestContext, RecordingServer } from '@warmfold/test-utils'
import { afterEach, expect } from 'vitest'
import type { OpenAICompatibleOptions } from '../src/config.ts'
import { OpenAICompatibleAdapter } from '../src/index.ts'

/** A recognisable API key: every test that sets it searches its output for it. */
export const SECRET_KEY = 'sk-test-SECRET-123'
/** The environment variable the tests put the key in. */
export const KEY_ENV = 'WARMFOLD_TEST_OPENAI_COMPATIBLE_KEY'
export const MODEL = 'test-model'

/** A runtime with the adapter plugin pointed at a recording server. */
export interface AdapterHarness extends TestContext {
  readonly server: RecordingServer
  readonly provider: string
}

/** User config for the adapter, without `baseURL` (the server's) and with short retries. */
export type HarnessConfig = Partial<Omit<OpenAICompatibleOptions, 'baseURL'>>

/** Starts a recording server and a runtime with the adapter registered as `config.provider` (default `test`). */
export async function mountAdapter(responder: Responder, config: HarnessConfig = {}): Promise<AdapterHarness> {
  const server = await RecordingServer.start(responder)
  const context = await createTestContext()
  context.ctx.plugin(LlmRuntime)
  const provider = config.provider ?? 'test'
  context.ctx.plugin(OpenAICompatibleAdapter, {
    provider,
    baseURL: server.baseURL,
    models: { [MODEL]: { contextWindow: 128000, efforts: ['off', 'low', 'high', 'max'] } },
    retryBaseMs: 1,
    ...config,
  })
  const dispose = context.dispose
  return Object.assign(context, {
    server,
    provider,
    async dispose() {
      await dispose.call(context)
      await server.close()
    },
  })
}

/** A minimal request to the harness's provider. */
export function request(harness: { provider: string }, extra: Partial<GenerateOptions> = {}): GenerateOptions {
  return { provider: harness.provider, model: MODEL, messages: [createUserMessage('hello')], ...extra }
}

/** Every chunk of one call through `ctx.llm.stream`. */
export async function collect(harness: TestContext, options: GenerateOptions): Promise<StreamChunk[]> {
  const chunks: StreamChunk[] = []
  for await (const chunk of harness.ctx.llm.stream(options)) chunks.push(chunk)
  return chunks
}

/** Runs `action`, expects an `LlmError` of `code`, and returns it. */
export async function expectLlmError(action: () => unknown, code: LlmErrorCode): Promise<LlmError> {
  let caught: unknown
  try {
    await action()
  } catch (error) {
    caught = error
  }
  expect(caught, 'expected the action to fail').toBeDefined()
  expect(LlmError.isInstance(caught), `expected an LlmError, got ${String(caught)}`).toBe(true)
  const error = caught as LlmError
  expect(error.code, error.message).toBe(code)
  return error
}

/** Asserts the context recorded no cordis warning or error, and always stops it. */
export async function finish(harness: AdapterHarness): Promise<void> {
  try {
    harness.assertClean()
  } finally {
    await harness.dispose()
  }
}

/**
 * Mounts adapters for one test file and finishes each (checked clean, then stopped) after the test
 * that mounted it. Call it once, at the file's top level.
 */
export function adapterHarnesses(): (responder: Responder, config?: HarnessConfig) => Promise<AdapterHarness> {
  const mounted: AdapterHarness[] = []
  afterEach(async () => {
    for (const harness of mounted.splice(0)) await finish(harness)
  })
  return async (responder, config = {}) => {
    const harness = await mountAdapter(responder, config)
    mounted.push(harness)
    return harness
  }
}
