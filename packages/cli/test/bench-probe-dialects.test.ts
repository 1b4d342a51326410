import type { RecordingServer } from '@warmfold/test-utils'
import { NamedEvent } from '@warmfold/test-utils'
import { afterEach, describe, expect, it } from 'vitest'
import type { BenchReport } from '../src/index.ts'
import { PROBE_DIALECTS } from '../src/bench/probe-dialects.ts'
import type { PrefixUsage } from './support/prefix-cache-endpoint.ts'
import { responsesEvents } from './support/adapter-replies.ts'
import { startPrefixCacheEndpoint } from './support/prefix-cache-endpoint.ts'
import { cli } from './run-cli.ts'

// `warmfold bench --cache-probe URL --probe-dialect D` for the wire formats beyond chat
// completions: each against a 127.0.0.1 server that speaks the format and reports cached tokens
// from a byte-prefix cache over the raw request bodies.

const servers: RecordingServer[] = []
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close()
})

/** Anthropic's stream of a 1-token answer; the uncached tokens are written (a breakpoint at the end). */
function anthropicReply(usage: PrefixUsage) {
  const start = {
    input_tokens: 0,
    cache_read_input_tokens: usage.cached,
    cache_creation_input_tokens: usage.uncached,
    output_tokens: 1,
  }
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
          usage: start,
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

/** Gemini's stream of a 1-token answer: bare `data:` chunks, the last with usage (implicit caching writes nothing). */
function geminiReply(usage: PrefixUsage) {
  const usageMetadata = {
    promptTokenCount: usage.prompt,
    cachedContentTokenCount: usage.cached,
    candidatesTokenCount: 1,
    totalTokenCount: usage.prompt + 1,
  }
  return {
    sse: [
      {
        candidates: [{ content: { parts: [{ text: 'x' }], role: 'model' }, finishReason: 'MAX_TOKENS', index: 0 }],
        usageMetadata,
      },
    ],
    done: false,
  }
}

const BENCH = ['bench', '--json', '--windows', '4800', '--steps', '6', '--strategies', 'warmfold']

describe('warmfold bench --probe-dialect', () => {
  it('lists every wire format in --help', async () => {
    const help = await cli(['bench', '--help'])
    for (const dialect of PROBE_DIALECTS) expect(help.stdout).toContain(dialect)
  })

  it('anthropic: probes /v1/messages, thinks on the smallest budget per effort, and prices the writes it reports', async () => {
    const server = await startPrefixCacheEndpoint((usage) => anthropicReply(usage))
    servers.push(server)
    const { code, stdout, stderr } = await cli([
      ...BENCH,
      '--cache-probe',
      server.origin,
      '--probe-dialect',
      'anthropic',
      '--probe-model',
      'claude-probe',
      '--price',
      'anthropic-5m',
      '--effort',
      'high',
    ])
    expect(stderr).not.toContain('failed')
    expect(code).toBe(0)
    const report = JSON.parse(stdout) as BenchReport
    const [run] = report.runs
    expect(run!.completed).toBe(true)
    expect(server.requests.every((request) => request.url === '/v1/messages')).toBe(true)
    // The envelope is kept: thinking on the probe's budget for effort high, output capped just above it.
    expect(
      server.requests.map((request) => [request.json.model, request.json.thinking, request.json.max_tokens]),
    ).toEqual(server.requests.map(() => ['claude-probe', { type: 'enabled', budget_tokens: 1025 }, 1026]))
    // The bench's numbers are the server's, writes included.
    expect(run!.sessionPromptTokens).toBe(server.usages.reduce((sum, usage) => sum + usage.prompt, 0))
    expect(run!.sessionCachedTokens).toBe(server.usages.reduce((sum, usage) => sum + usage.cached, 0))
    expect(run!.sessionCachedTokens).toBeGreaterThan(0)
    expect(run!.cost.cacheWrite).toBeGreaterThan(0)
  })

  it('gemini: probes streamGenerateContent with one thinking level per effort, and refuses a price that bills writes', async () => {
    const server = await startPrefixCacheEndpoint((usage) => geminiReply(usage))
    servers.push(server)
    const refused = await cli([
      ...BENCH,
      '--cache-probe',
      server.origin,
      '--probe-dialect',
      'gemini',
      '--price',
      'anthropic-5m',
    ])
    expect(refused.code).toBe(2)
    expect(refused.stderr).toContain(
      '--cache-probe with --probe-dialect gemini reports only cached and uncached tokens, not writes',
    )
    const { code, stdout } = await cli([
      ...BENCH,
      '--cache-probe',
      server.origin,
      '--probe-dialect',
      'gemini',
      '--effort',
      'max',
    ])
    expect(code).toBe(0)
    const [run] = (JSON.parse(stdout) as BenchReport).runs
    expect(run!.completed).toBe(true)
    expect(
      server.requests.every((request) => request.url === '/v1beta/models/probe:streamGenerateContent?alt=sse'),
    ).toBe(true)
    expect(
      server.requests.map((request) => [
        request.json.generationConfig.thinkingConfig?.thinkingLevel,
        request.json.generationConfig.maxOutputTokens,
      ]),
    ).toEqual(server.requests.map(() => ['HIGH', 1]))
    expect(run!.sessionPromptTokens).toBe(server.usages.reduce((sum, usage) => sum + usage.prompt, 0))
    expect(run!.sessionCachedTokens).toBe(server.usages.reduce((sum, usage) => sum + usage.cached, 0))
    expect(run!.sessionCachedTokens).toBeGreaterThan(0)
  })

  it('openai-responses: probes /responses statelessly and prices the writes it reports', async () => {
    // OpenAI's newest models bill writes: here every uncached token is written, as a breakpoint cache would.
    const server = await startPrefixCacheEndpoint((usage) => ({
      sse: responsesEvents({
        input_tokens: usage.prompt,
        input_tokens_details: { cached_tokens: usage.cached, cache_write_tokens: usage.uncached },
        output_tokens: 1,
        output_tokens_details: { reasoning_tokens: 0 },
      }),
      done: false,
    }))
    servers.push(server)
    const { code, stdout, stderr } = await cli([
      ...BENCH,
      '--cache-probe',
      `${server.origin}/v1`,
      '--probe-dialect',
      'openai-responses',
      '--probe-model',
      'gpt-probe',
      '--price',
      'openai',
      '--effort',
      'high',
    ])
    expect(stderr).not.toContain('failed')
    expect(code).toBe(0)
    const [run] = (JSON.parse(stdout) as BenchReport).runs
    expect(run!.completed).toBe(true)
    expect(server.requests.every((request) => request.url === '/v1/responses')).toBe(true)
    expect(
      server.requests.map((request) => [
        request.json.model,
        request.json.store,
        request.json.reasoning?.effort,
        request.json.max_output_tokens,
      ]),
    ).toEqual(server.requests.map(() => ['gpt-probe', false, 'high', 1]))
    expect(run!.sessionPromptTokens).toBe(server.usages.reduce((sum, usage) => sum + usage.prompt, 0))
    expect(run!.sessionCachedTokens).toBe(server.usages.reduce((sum, usage) => sum + usage.cached, 0))
    expect(run!.sessionCachedTokens).toBeGreaterThan(0)
    expect(run!.cost.cacheWrite).toBeGreaterThan(0)
  })
})
