import { createUserMessage } from '@warmfold/llm'
import { AnthropicLlmAdapter, parseAnthropicConfig } from '@warmfold/llm-anthropic'
import type { RecordedRequest } from '@warmfold/test-utils'
import { NamedEvent, RecordingServer } from '@warmfold/test-utils'
import { afterEach, describe, expect, it } from 'vitest'
import type { ProbeConnector } from '../src/index.ts'
import { CacheProbe } from '../src/index.ts'

// A probe through another wire format: the Anthropic adapter, plugged in with `connect`, against
// a real 127.0.0.1 server speaking Anthropic's SSE. The probe must use the connector's URL in its
// errors, send through the probe's fetch, and keep the writes Anthropic reports.

const servers: RecordingServer[] = []
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close()
})

const anthropic: ProbeConnector = ({ baseURL, model, apiKey, timeoutMs, fetch }) => {
  const config = parseAnthropicConfig({
    baseURL,
    models: { [model]: { contextWindow: 1_000_000, defaultMaxTokens: 1 } },
    apiKey: apiKey ?? 'unused',
    timeoutMs,
    maxRetries: 0,
  })
  return { adapter: new AnthropicLlmAdapter(config, config.apiKey as string, { fetch }), url: `${baseURL}/v1/messages` }
}

function reply(usage: Record<string, number>): { sse: NamedEvent[]; done: false } {
  return {
    sse: [
      new NamedEvent('message_start', {
        type: 'message_start',
        message: {
          id: 'msg_1',
          type: 'message',
          role: 'assistant',
          model: 'probe',
          content: [],
          stop_reason: null,
          usage: { ...usage, output_tokens: 1 },
        },
      }),
      new NamedEvent('content_block_start', {
        type: 'content_block_start',
        index: 0,
        content_block: { type: 'text', text: '' },
      }),
      new NamedEvent('content_block_delta', {
        type: 'content_block_delta',
        index: 0,
        delta: { type: 'text_delta', text: 'x' },
      }),
      new NamedEvent('content_block_stop', { type: 'content_block_stop', index: 0 }),
      new NamedEvent('message_delta', {
        type: 'message_delta',
        delta: { stop_reason: 'max_tokens', stop_sequence: null },
        usage: { output_tokens: 1 },
      }),
      new NamedEvent('message_stop', { type: 'message_stop' }),
    ],
    done: false,
  }
}

const request = {
  provider: 'sim',
  model: 'coder',
  purpose: 'conversation',
  system: 'You are terse.',
  messages: [createUserMessage('Read the loader.')],
}

describe('CacheProbe with a connector', () => {
  it("sends through the connector's adapter and records reads and writes as the endpoint reports them", async () => {
    const server = await RecordingServer.start(() =>
      reply({ input_tokens: 7, cache_read_input_tokens: 1200, cache_creation_input_tokens: 300 }),
    )
    servers.push(server)
    const probe = new CacheProbe({ baseURL: server.origin, model: 'claude-probe', connect: anthropic })
    expect(probe.url).toBe(`${server.origin}/v1/messages`)
    const record = await probe.probe(request)
    expect(record).toEqual({
      index: 0,
      purpose: 'conversation',
      promptTokens: 1507,
      cachedTokens: 1200,
      uncachedTokens: 307,
      cacheWriteTokens: 300,
    })
    const sent = server.requests[0] as RecordedRequest
    expect(sent.url).toBe('/v1/messages')
    expect(sent.json).toMatchObject({ model: 'claude-probe', max_tokens: 1, messages: [{ role: 'user' }] })
  })

  it("quotes what the endpoint answered, through the probe's fetch, at the connector's URL", async () => {
    const server = await RecordingServer.start(() => ({ status: 200, body: '<html>login</html>' }))
    servers.push(server)
    const probe = new CacheProbe({ baseURL: server.origin, connect: anthropic })
    const error = await probe.probe(request).then(
      () => undefined,
      (caught: unknown) => caught as Error,
    )
    expect(error?.message).toContain(`request 0 (conversation) to ${server.origin}/v1/messages failed`)
    expect(error?.message).toContain('the endpoint answered HTTP 200 (text/plain), body: <html>login</html>')
  })
})
