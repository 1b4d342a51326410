import type { GenerateOptions } from '@warmfold/llm'
import {
  createAssistantMessage,
  createToolResultMessage,
  createUserMessage,
  imageBlock,
  LlmError,
  promptCacheKeyFor,
  reasoningBlock,
  textBlock,
  toolCallBlock,
} from '@warmfold/llm'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { encodeMessagePhase } from '../src/message-phase.ts'
import { encodeReasoningSignature } from '../src/reasoning-signature.ts'
import { serializeRequest } from '../src/serialize-request.ts'
import type { SerializeSettings } from '../src/serialize-request.ts'

const settings: SerializeSettings = {
  provider: 'openai',
  defaultMaxTokens: 1024,
  reasoningSummary: 'auto',
  promptCacheKey: promptCacheKeyFor('session-1'),
  cacheRetention: '24h',
}
const origin = { provider: 'openai', model: 'gpt-test' }
const signature = encodeReasoningSignature({
  id: 'rs_1',
  encrypted_content: 'gAAA-enc',
  summary: [{ type: 'summary_text', text: 'I should read a.ts.' }],
})

function options(overrides: Partial<GenerateOptions> = {}): GenerateOptions {
  return { provider: 'openai', model: 'gpt-test', messages: [createUserMessage('Hi')], ...overrides }
}

function thrown(action: () => unknown): LlmError {
  try {
    action()
  } catch (error) {
    if (LlmError.isInstance(error)) return error
    throw error
  }
  throw new Error('did not throw')
}

function render(parameters: Record<string, unknown>): string {
  return JSON.stringify(
    serializeRequest(options({ tools: [{ name: 't', description: 'd', parameters: parameters as never }] }), settings)
      .tools,
  )
}

describe('serializeRequest', () => {
  it('maps system, tools, effort, user content, assistant items and tool outputs in order (snapshot)', () => {
    const body = serializeRequest(
      options({
        system: 'You are a coding agent.',
        tools: [
          {
            name: 'read',
            description: 'Read a file',
            parameters: { type: 'object', required: ['path'], properties: { path: { type: 'string' } } },
          },
        ],
        reasoningEffort: 'high',
        temperature: 0.5,
        maxTokens: 2000,
        messages: [
          createUserMessage([textBlock('Look at this.'), imageBlock('image/png', 'iVBORw0KGgo=')]),
          createAssistantMessage(
            [
              reasoningBlock('I should read a.ts.', signature),
              textBlock('Reading both.', encodeMessagePhase('commentary')),
              toolCallBlock('call_1', 'read', '{"path": "a.ts"}'),
              toolCallBlock('call_2', 'read', '{"path":"b.ts"}'),
            ],
            origin,
          ),
          createToolResultMessage('call_1', 'export const a = 1'),
          createToolResultMessage('call_2', [textBlock('ENOENT'), imageBlock('image/jpeg', '/9j/')], { isError: true }),
          createUserMessage('Summarize.'),
        ],
      }),
      settings,
    )
    expect(JSON.stringify(body, null, 1)).toMatchSnapshot()
    expect(Object.keys(body)).toEqual([
      'model',
      'instructions',
      'tools',
      'reasoning',
      'max_output_tokens',
      'temperature',
      'store',
      'include',
      'prompt_cache_key',
      'prompt_cache_retention',
      'stream',
      'input',
    ])
    expect(body).toMatchObject({
      store: false,
      include: ['reasoning.encrypted_content'],
      stream: true,
      reasoning: { effort: 'high', summary: 'auto' },
    })
    expect(body).not.toHaveProperty('previous_response_id')
    expect(body.input.map((item) => item.type)).toEqual([
      'message',
      'reasoning',
      'message',
      'function_call',
      'function_call',
      'function_call_output',
      'function_call_output',
      'message',
    ])
  })

  it('sends no reasoning without an effort, no summary when reasoningSummary is none, no max_output_tokens without a default', () => {
    expect(serializeRequest(options(), { provider: 'openai', reasoningSummary: 'auto' })).toEqual({
      model: 'gpt-test',
      store: false,
      include: ['reasoning.encrypted_content'],
      stream: true,
      input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Hi' }] }],
    })
    expect(
      serializeRequest(options({ reasoningEffort: 'low' }), { ...settings, reasoningSummary: 'none' }).reasoning,
    ).toEqual({ effort: 'low' })
  })

  it('leaves out reasoning that cannot be replayed statelessly: unsigned, another provider’s, or without encrypted content', () => {
    const bare = encodeReasoningSignature({ id: 'rs_2', encrypted_content: null, summary: [] })
    const body = serializeRequest(
      options({
        messages: [
          createAssistantMessage(
            [
              reasoningBlock('mine?'),
              reasoningBlock('anthropic', 'EqQBCkYIBxgCKkA'),
              reasoningBlock('bare', bare),
              textBlock('ok'),
            ],
            origin,
          ),
        ],
      }),
      settings,
    )
    expect(body.input).toEqual([{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'ok' }] }])
  })

  it('refuses stop with INVALID_REQUEST naming the option, and content the API cannot take', () => {
    const stop = thrown(() => serializeRequest(options({ stop: ['<halt>'] }), settings))
    expect(stop).toMatchObject({ code: 'INVALID_REQUEST', retryable: false })
    expect(stop.message).toContain('GenerateOptions.stop (["<halt>"])')
    expect(
      thrown(() =>
        serializeRequest(options({ messages: [createUserMessage([toolCallBlock('c', 't', '{}')])] }), settings),
      ).message,
    ).toMatch(/messages\[0\] \(user\) holds a block of type tool-call/)
  })

  it('renders tool schemas in canonical key order', () => {
    expect(render({ type: 'object', properties: { b: { type: 'string' }, a: { type: 'number' } } })).toBe(
      render({ properties: { a: { type: 'number' }, b: { type: 'string' } }, type: 'object' }),
    )
  })
})

describe('determinism', () => {
  const text = fc.string({ maxLength: 12 })
  const block = fc.oneof(
    text.map((value) => textBlock(value)),
    fc.tuple(text, text).map(([id, args]) => toolCallBlock(`call_${id}`, 'read', args)),
    fc.tuple(text, fc.option(text, { nil: null })).map(([summary, encrypted]) =>
      reasoningBlock(
        summary,
        encodeReasoningSignature({
          id: 'rs_x',
          encrypted_content: encrypted,
          summary: [{ type: 'summary_text', text: summary }],
        }),
      ),
    ),
  )
  const message = fc.oneof(
    text.map((value) => createUserMessage(value)),
    fc.array(block, { minLength: 1, maxLength: 4 }).map((blocks) => createAssistantMessage(blocks, origin)),
    fc.tuple(text, text).map(([id, output]) => createToolResultMessage(`call_${id}`, output)),
  )
  const request = fc.record({
    messages: fc.array(message, { maxLength: 8 }),
    system: fc.option(text, { nil: undefined }),
    reasoningEffort: fc.option(fc.constantFrom('low', 'high'), { nil: undefined }),
    temperature: fc.option(fc.double({ min: 0, max: 2, noNaN: true }), { nil: undefined }),
    maxTokens: fc.option(fc.integer({ min: 1, max: 10_000 }), { nil: undefined }),
    sessionId: fc.option(text, { nil: undefined }),
    purpose: fc.constantFrom('conversation', 'compaction'),
  })

  it('the same options always give the same bytes, whatever the message ids, purpose or call order', () => {
    fc.assert(
      fc.property(request, (generated) => {
        const build = (purpose: string) => {
          const call = options({ ...generated, purpose })
          const key = call.sessionId === undefined ? undefined : promptCacheKeyFor(call.sessionId)
          return JSON.stringify(
            serializeRequest(call, {
              provider: 'openai',
              reasoningSummary: 'auto',
              ...(key ? { promptCacheKey: key } : {}),
            }),
          )
        }
        const first = build(generated.purpose)
        // Fresh message objects (new ids, same content) and the other purpose render the same bytes.
        const copies = generated.messages.map((m) =>
          m.role === 'assistant' ? createAssistantMessage(m.content, origin) : { ...m, id: `${m.id}-copy` },
        )
        expect(
          JSON.stringify(
            serializeRequest(options({ ...generated, messages: copies }), {
              provider: 'openai',
              reasoningSummary: 'auto',
              ...(generated.sessionId === undefined ? {} : { promptCacheKey: promptCacheKeyFor(generated.sessionId) }),
            }),
          ),
        ).toBe(first)
        expect(build(generated.purpose === 'compaction' ? 'conversation' : 'compaction')).toBe(first)
        // No input item carries an id (store: false cannot resolve one). Checked on the parsed items,
        // not the text: generated content may itself contain the characters "id".
        const items = (JSON.parse(first) as { input: Array<Record<string, unknown>> }).input
        expect(items.filter((item) => 'id' in item)).toEqual([])
      }),
      { numRuns: 300 },
    )
  })
})
