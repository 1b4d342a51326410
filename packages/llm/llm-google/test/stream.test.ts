import { createAssistantMessage, createToolResultMessage, createUserMessage } from '@warmfold/llm'
import { afterEach, describe, expect, it } from 'vitest'
import { finishReason } from '../src/map-stream.ts'
import { SYNTHETIC_CALL_ID_PREFIX } from '../src/serialize-request.ts'
import { disposeAll, MODEL, MODEL_3, mountAdapter, request, TEST_KEY } from './fixture.ts'
import { geminiReply } from './gemini-stream.ts'

afterEach(disposeAll)

describe('streaming response mapping', () => {
  it('maps thought summaries, text and a function call with their signatures, usage and the finish reason', async () => {
    const adapter = await mountAdapter(() =>
      geminiReply({
        parts: [
          { text: 'The user wants a file.', thought: true },
          { text: 'Reading it.' },
          {
            functionCall: { id: 'call_1', name: 'read', args: { path: 'src/a.ts', limit: 20 } },
            thoughtSignature: 'c2lnLTE=',
          },
        ],
        usage: {
          promptTokenCount: 1200,
          cachedContentTokenCount: 1000,
          candidatesTokenCount: 30,
          thoughtsTokenCount: 25,
          totalTokenCount: 1255,
        },
      }),
    )
    const chunks = await adapter.collect({ model: MODEL_3, reasoningEffort: 'high' })
    expect(chunks).toEqual([
      { type: 'block-start', index: 0, blockType: 'reasoning' },
      { type: 'reasoning-delta', index: 0, delta: 'The user wa' },
      { type: 'reasoning-delta', index: 0, delta: 'nts a file.' },
      { type: 'block-end', index: 0 },
      { type: 'block-start', index: 1, blockType: 'text' },
      { type: 'text-delta', index: 1, delta: 'Readin' },
      { type: 'text-delta', index: 1, delta: 'g it.' },
      { type: 'block-end', index: 1 },
      { type: 'block-start', index: 2, blockType: 'tool-call', id: 'call_1', name: 'read' },
      { type: 'tool-call-delta', index: 2, argumentsDelta: '{"path":"src/a.ts","limit":20}' },
      { type: 'block-end', index: 2, signature: 'c2lnLTE=' },
      {
        type: 'usage',
        usage: {
          inputTokens: 200,
          cacheReadTokens: 1000,
          outputTokens: 55,
          reasoningTokens: 25,
          raw: {
            promptTokenCount: 1200,
            cachedContentTokenCount: 1000,
            candidatesTokenCount: 30,
            thoughtsTokenCount: 25,
            totalTokenCount: 1255,
          },
        },
      },
      { type: 'finish', reason: 'tool-calls' },
    ])
    adapter.assertClean()
  })

  it('posts to /v1beta/models/{model}:streamGenerateContent?alt=sse with the key as x-goog-api-key only', async () => {
    const adapter = await mountAdapter(() => geminiReply({ parts: [{ text: 'hi' }] }))
    await adapter.collect()
    const [recorded] = adapter.server.requests
    expect(recorded).toMatchObject({ method: 'POST', url: `/v1beta/models/${MODEL}:streamGenerateContent?alt=sse` })
    expect(recorded!.headers['x-goog-api-key']).toBe(TEST_KEY)
    expect(recorded!.headers.authorization).toBeUndefined()
    expect(recorded!.url).not.toContain(TEST_KEY)
    expect(recorded!.headers['x-server-timeout']).toBeUndefined()
    adapter.assertClean()
  })

  it('replays the thought signature on the same part, with the function call id, over HTTP', async () => {
    const adapter = await mountAdapter((_request, index) =>
      index === 0
        ? geminiReply({
            parts: [
              { text: 'plan', thought: true, thoughtSignature: 'dGhvdWdodA==' },
              { functionCall: { id: 'fc-9', name: 'read', args: { b: 1, a: 2 } }, thoughtSignature: 'Y2FsbA==' },
              { functionCall: { id: 'fc-10', name: 'read', args: { a: 3 } } },
            ],
          })
        : geminiReply({ parts: [{ text: 'done' }, { text: '', thoughtSignature: 'ZW5k' }] }),
    )
    const first = await adapter.ctx.llm.generate(
      request({ model: MODEL_3, reasoningEffort: 'low', messages: [createUserMessage('go')] }),
    )
    expect(first.content).toEqual([
      { type: 'reasoning', text: 'plan', signature: 'dGhvdWdodA==' },
      { type: 'tool-call', id: 'fc-9', name: 'read', arguments: '{"b":1,"a":2}', signature: 'Y2FsbA==' },
      { type: 'tool-call', id: 'fc-10', name: 'read', arguments: '{"a":3}' },
    ])
    const history = [
      createUserMessage('go'),
      createAssistantMessage(first.content, { provider: 'google', model: MODEL_3 }),
      createToolResultMessage('fc-9', 'text of b'),
      createToolResultMessage('fc-10', 'no such file', { isError: true }),
    ]
    const second = await adapter.ctx.llm.generate(
      request({ model: MODEL_3, reasoningEffort: 'low', messages: history }),
    )
    expect(second.content).toEqual([
      { type: 'text', text: 'done' },
      { type: 'text', text: '', signature: 'ZW5k' },
    ])
    expect(adapter.server.requests[1]!.body).toContain(
      '{"parts":[{"text":"plan","thought":true,"thoughtSignature":"dGhvdWdodA=="},{"functionCall":{"args":{"b":1,"a":2},"id":"fc-9","name":"read"},"thoughtSignature":"Y2FsbA=="},{"functionCall":{"args":{"a":3},"id":"fc-10","name":"read"}}],"role":"model"},' +
        '{"parts":[{"functionResponse":{"id":"fc-9","name":"read","response":{"output":"text of b"}}},{"functionResponse":{"id":"fc-10","name":"read","response":{"error":"no such file"}}}],"role":"user"}',
    )
    await adapter.collect({
      model: MODEL_3,
      messages: [...history, createAssistantMessage(second.content, { provider: 'google', model: MODEL_3 })],
    })
    expect(adapter.server.requests[2]!.body).toContain(
      '{"parts":[{"text":"done"},{"text":"","thoughtSignature":"ZW5k"}],"role":"model"}',
    )
    adapter.assertClean()
  })

  it('makes up an id for a call without one and never sends it back (name and order match the response)', async () => {
    const adapter = await mountAdapter(() => geminiReply({ parts: [{ functionCall: { name: 'read', args: {} } }] }))
    const first = await adapter.ctx.llm.generate(request({ messages: [createUserMessage('go')] }))
    const call = first.content[0]!
    expect(call).toMatchObject({ type: 'tool-call', name: 'read', arguments: '' })
    const id = (call as { id: string }).id
    expect(id.startsWith(SYNTHETIC_CALL_ID_PREFIX)).toBe(true)
    await adapter.collect({
      messages: [
        createUserMessage('go'),
        createAssistantMessage(first.content, { provider: 'google', model: MODEL }),
        createToolResultMessage(id, 'ok'),
      ],
    })
    const body = adapter.server.requests[1]!.json
    expect(body.contents.slice(1)).toEqual([
      { parts: [{ functionCall: { args: {}, name: 'read' } }], role: 'model' },
      { parts: [{ functionResponse: { name: 'read', response: { output: 'ok' } } }], role: 'user' },
    ])
    expect(adapter.server.requests[1]!.body).not.toContain(SYNTHETIC_CALL_ID_PREFIX)
    adapter.assertClean()
  })

  it('maps every finish reason', () => {
    const reasons = [
      'STOP',
      'MAX_TOKENS',
      'SAFETY',
      'RECITATION',
      'PROHIBITED_CONTENT',
      'MALFORMED_FUNCTION_CALL',
      'OTHER',
      'FINISH_REASON_UNSPECIFIED',
      'SOMETHING_NEW',
    ]
    expect(reasons.map((reason) => finishReason(reason, false))).toEqual([
      'stop',
      'max-tokens',
      'content-filter',
      'content-filter',
      'content-filter',
      'error',
      'error',
      'stop',
      'stop',
    ])
    expect(finishReason('STOP', true)).toBe('tool-calls')
    expect(finishReason('MAX_TOKENS', true)).toBe('max-tokens')
  })

  it('finishes a blocked prompt (promptFeedback, no candidates) as content-filter', async () => {
    const adapter = await mountAdapter(() => ({
      sse: [{ promptFeedback: { blockReason: 'SAFETY' }, usageMetadata: { promptTokenCount: 7, totalTokenCount: 7 } }],
      done: false,
    }))
    const chunks = await adapter.collect()
    expect(chunks).toEqual([
      { type: 'usage', usage: { inputTokens: 7, raw: { promptTokenCount: 7, totalTokenCount: 7 } } },
      { type: 'finish', reason: 'content-filter' },
    ])
  })
})
