import type { GenerateOptions, LlmAdapter } from '@warmfold/llm'
import { AnthropicLlmAdapter, parseAnthropicConfig } from '@warmfold/llm-anthropic'
import { ChatCompletionsAdapter, parseOpenAICompatibleConfig } from '@warmfold/llm-openai-compatible'
import { RecordingServer } from '@warmfold/test-utils'
import { AiSdkLlmAdapter, parseAiSdkConfig } from '../src/index.ts'
import type { Kind } from './fixture.ts'
import { modelConfig, modelFor, TEST_KEY, WIRE_MODEL } from './fixture.ts'
import { anthropicStream, chatStream } from './sse.ts'

/** Both ways of reaching one server: the AI SDK provider through this adapter, and warmfold's direct adapter. */
export interface WireBench {
  readonly server: RecordingServer
  /** The raw body the AI SDK adapter sends for `options` (model id `main`). */
  viaAiSdk(options: GenerateOptions): Promise<string>
  /** The raw body the direct adapter sends for the same options (model id = the wire model). */
  viaDirect(options: GenerateOptions): Promise<string>
  close(): Promise<void>
}

/** A server answering every request with a short complete reply in `kind`'s wire format. */
export async function wireBench(kind: Kind): Promise<WireBench> {
  const server = await RecordingServer.start(() =>
    kind === 'compat'
      ? { sse: chatStream(WIRE_MODEL.compat, { text: 'ok' }) }
      : { sse: anthropicStream({ blocks: [{ type: 'text', text: 'ok' }] }), done: false },
  )
  const aiSdk = new AiSdkLlmAdapter(
    parseAiSdkConfig({
      provider: 'ai',
      models: { main: modelConfig(kind, modelFor(kind, server)) },
      redact: [TEST_KEY],
    }),
  )
  const direct: LlmAdapter =
    kind === 'compat'
      ? new ChatCompletionsAdapter({
          ...parseOpenAICompatibleConfig({
            provider: 'direct',
            baseURL: server.baseURL,
            dialect: 'openai',
            models: { [WIRE_MODEL.compat]: { contextWindow: 100_000, efforts: ['off', 'high'] } },
          }),
          apiKey: TEST_KEY,
        })
      : new AnthropicLlmAdapter(
          parseAnthropicConfig({
            provider: 'direct',
            baseURL: server.baseURL,
            apiKey: TEST_KEY,
            models: {
              [WIRE_MODEL.anthropic]: { contextWindow: 100_000, defaultMaxTokens: 2048, efforts: ['off', 'high'] },
            },
            thinkingBudgets: { high: 1024 },
          }),
          TEST_KEY,
        )
  const send = async (adapter: LlmAdapter, options: GenerateOptions) => {
    const before = server.requests.length
    for await (const _ of adapter.stream(options)) {
      // Drain: only the request body matters here.
    }
    return server.requests[before]!.body
  }
  return {
    server,
    viaAiSdk: (options) => send(aiSdk, { ...options, provider: 'ai', model: 'main' }),
    viaDirect: (options) => send(direct, { ...options, provider: 'direct', model: WIRE_MODEL[kind] }),
    close: () => server.close(),
  }
}
