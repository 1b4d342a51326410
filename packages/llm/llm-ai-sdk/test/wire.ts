import type { GenerateOptions, LlmAdapter, Message, ToolDefinition } from '@warmfold/llm'
import {
  createAssistantMessage,
  createMessage,
  createToolResultMessage,
  reasoningBlock,
  textBlock,
  toolCallBlock,
} from '@warmfold/llm'
import { RecordingServer } from '@warmfold/test-utils'
import { AiSdkLlmAdapter, parseAiSdkConfig } from '../src/index.ts'
import type { Kind } from './fixture.ts'
import { modelConfig, modelFor, TEST_KEY, WIRE_MODEL } from './fixture.ts'
import { anthropicStream, chatStream } from './sse.ts'

/**
 * One server in `kind`'s wire format and this adapter's AI SDK provider pointed at it. The
 * comparison with warmfold's direct adapters on the same server (`bodyOf` with another adapter)
 * is in packages/testing/integration/test/adapters/ai-sdk/wire-direct.test.ts.
 */
export interface WireBench {
  readonly server: RecordingServer
  /** The raw body the AI SDK adapter sends for `options` (model id `main`). */
  viaAiSdk(options: GenerateOptions): Promise<string>
  /** The raw body `adapter` sends to this server for `options`. */
  bodyOf(adapter: LlmAdapter, options: GenerateOptions): Promise<string>
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
  const bodyOf = async (adapter: LlmAdapter, options: GenerateOptions) => {
    const before = server.requests.length
    for await (const _ of adapter.stream(options)) {
      // Drain: only the request body matters here.
    }
    return server.requests[before]!.body
  }
  return {
    server,
    viaAiSdk: (options) => bodyOf(aiSdk, { ...options, provider: 'ai', model: 'main' }),
    bodyOf,
    close: () => server.close(),
  }
}

/** The origin of the assistant messages of the wire tests. */
export const origin = { provider: 'ai', model: 'main' }
/** A tool, and the same tool with its schema keys in another order. */
export const READ: ToolDefinition = {
  name: 'read',
  description: 'Read a file',
  parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
}
export const READ_REORDERED: ToolDefinition = {
  name: 'read',
  description: 'Read a file',
  parameters: { required: ['path'], properties: { path: { type: 'string' } }, type: 'object' },
}

/** A signature as this adapter writes it for `kind` (the Anthropic provider replays only signed thinking). */
export const signed = (kind: Kind, signature: string) =>
  kind === 'anthropic' ? JSON.stringify({ anthropic: { signature } }) : undefined

function conversation(kind: Kind, ids = 'a'): Message[] {
  return [
    createMessage({ id: `${ids}-1`, role: 'user', content: 'Look at a.ts' }),
    createAssistantMessage(
      [
        reasoningBlock('I should read it.', signed(kind, 'sig-1')),
        textBlock('Reading.'),
        toolCallBlock('call_1', 'read', '{"path": "a.ts",  "z":1}'),
      ],
      origin,
      `${ids}-2`,
    ),
    createToolResultMessage('call_1', 'export const a = 1', { id: `${ids}-3` }),
  ]
}

/** Options using every field the wire tests compare: system, tools, reasoning, temperature, stop, cap, session. */
export function rich(kind: Kind): GenerateOptions {
  return {
    provider: 'ai',
    model: 'main',
    system: 'You are a coding agent.',
    tools: [READ],
    reasoningEffort: 'high',
    temperature: 0.5,
    stop: ['<halt>'],
    maxTokens: kind === 'anthropic' ? 1524 : 500,
    sessionId: 'session-1',
    messages: conversation(kind),
  }
}
