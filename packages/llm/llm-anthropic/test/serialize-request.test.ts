import type { GenerateOptions } from '@warmfold/llm'
import {
  createAssistantMessage,
  createMessage,
  createToolResultMessage,
  createUserMessage,
  imageBlock,
  LlmError,
  reasoningBlock,
  textBlock,
  toolCallBlock,
} from '@warmfold/llm'
import { describe, expect, it } from 'vitest'
import { DEFAULT_THINKING_BUDGETS } from '../src/config.ts'
import { serializeRequest } from '../src/serialize-request.ts'

const settings = { provider: 'anthropic', defaultMaxTokens: 1024, thinkingBudgets: DEFAULT_THINKING_BUDGETS }
const origin = { provider: 'anthropic', model: 'claude-test' }

function options(overrides: Partial<GenerateOptions> = {}): GenerateOptions {
  return { provider: 'anthropic', model: 'claude-test', messages: [createUserMessage('Hi')], ...overrides }
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

function build(id: string, parameters: Record<string, unknown>): string {
  return JSON.stringify(
    serializeRequest(
      options({
        tools: [{ name: 't', description: 'd', parameters: parameters as never }],
        messages: [
          createMessage({ id, role: 'user', content: 'x' }),
          createAssistantMessage([toolCallBlock('c', 't', '{"z":1,"a":{"y":2,"b":3}}')], origin, `${id}-a`),
        ],
      }),
      settings,
    ),
  )
}

describe('serializeRequest', () => {
  it('maps system, tools, user content, assistant turns and merged tool results', () => {
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
        stop: ['<halt>'],
        maxTokens: 2000,
        messages: [
          createUserMessage([textBlock('Look at this.'), imageBlock('image/png', 'iVBORw0KGgo=')]),
          createAssistantMessage(
            [
              textBlock('Reading both.'),
              toolCallBlock('toolu_1', 'read', '{"path": "a.ts"}'),
              reasoningBlock('I should read.', 'sig-1'),
              toolCallBlock('toolu_2', 'read', '{"path":"b.ts"}'),
            ],
            origin,
          ),
          createToolResultMessage('toolu_1', 'export const a = 1'),
          createToolResultMessage('toolu_2', [textBlock('ENOENT'), imageBlock('image/jpeg', '/9j/')], {
            isError: true,
          }),
          createUserMessage('Summarize.'),
        ],
      }),
      settings,
    )
    expect(body).toEqual({
      model: 'claude-test',
      max_tokens: 2000,
      stream: true,
      thinking: { type: 'enabled', budget_tokens: 8192 },
      temperature: 0.5,
      stop_sequences: ['<halt>'],
      tools: [
        {
          name: 'read',
          description: 'Read a file',
          input_schema: { properties: { path: { type: 'string' } }, required: ['path'], type: 'object' },
        },
      ],
      system: [{ type: 'text', text: 'You are a coding agent.' }],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Look at this.' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'I should read.', signature: 'sig-1' },
            { type: 'text', text: 'Reading both.' },
            { type: 'tool_use', id: 'toolu_1', name: 'read', input: { path: 'a.ts' } },
            { type: 'tool_use', id: 'toolu_2', name: 'read', input: { path: 'b.ts' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'export const a = 1' }] },
            {
              type: 'tool_result',
              tool_use_id: 'toolu_2',
              content: [
                { type: 'text', text: 'ENOENT' },
                { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: '/9j/' } },
              ],
              is_error: true,
            },
            { type: 'text', text: 'Summarize.' },
          ],
        },
      ],
    })
    // Envelope first, then Anthropic's cache hierarchy: tools → system → messages.
    expect(Object.keys(body)).toEqual([
      'model',
      'max_tokens',
      'stream',
      'thinking',
      'temperature',
      'stop_sequences',
      'tools',
      'system',
      'messages',
    ])
  })

  it('is deterministic: ids, sources and key order of tool schemas never change the bytes', () => {
    const first = build('one', { type: 'object', properties: { b: { type: 'string' }, a: { type: 'number' } } })
    const second = build('two', { properties: { a: { type: 'number' }, b: { type: 'string' } }, type: 'object' })
    expect(second).toBe(first)
    // The model's key order inside tool input is kept, not sorted.
    expect(first).toContain('"input":{"z":1,"a":{"y":2,"b":3}}')
    expect(first).toContain(
      '"input_schema":{"properties":{"a":{"type":"number"},"b":{"type":"string"}},"type":"object"}',
    )
  })

  it('sends thinking only for efforts with a budget, and temperature and stop as given', () => {
    expect(serializeRequest(options(), settings)).not.toHaveProperty('thinking')
    expect(serializeRequest(options({ reasoningEffort: 'off', temperature: 0.2 }), settings)).toMatchObject({
      temperature: 0.2,
    })
    expect(serializeRequest(options({ reasoningEffort: 'off' }), settings)).not.toHaveProperty('thinking')
    // Anthropic rejects temperature ≠ 1 with thinking; the adapter does not hide that.
    expect(serializeRequest(options({ reasoningEffort: 'low', temperature: 0.2 }), settings)).toMatchObject({
      thinking: { type: 'enabled', budget_tokens: 2048 },
      temperature: 0.2,
    })
    expect(serializeRequest(options({ stop: [] }), settings).stop_sequences).toEqual([])
    expect(serializeRequest(options(), settings).max_tokens).toBe(1024)
    const error = thrown(() => serializeRequest(options({ reasoningEffort: 'medium' }), settings))
    expect(error.code).toBe('UNSUPPORTED_REASONING_EFFORT')
    expect(error.message).toMatch(
      /"medium" has no thinking budget for anthropic\/claude-test; known efforts: off, low, high, max/,
    )
  })

  it('leaves out what Anthropic cannot replay and merges the neighbours it leaves behind', () => {
    const body = serializeRequest(
      options({
        messages: [
          createUserMessage('first'),
          createAssistantMessage([reasoningBlock('unsigned thoughts')], origin),
          createUserMessage([textBlock(''), textBlock('second')]),
          createAssistantMessage([reasoningBlock('kept', 'sig'), textBlock('')], origin),
        ],
      }),
      settings,
    )
    expect(body.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'first' },
          { type: 'text', text: 'second' },
        ],
      },
      { role: 'assistant', content: [{ type: 'thinking', thinking: 'kept', signature: 'sig' }] },
    ])
  })

  it('rejects content Anthropic cannot take, naming the message', () => {
    const system = thrown(() =>
      serializeRequest(
        options({ messages: [createUserMessage('a'), createMessage({ role: 'system', content: 'rules' })] }),
        settings,
      ),
    )
    expect(system).toMatchObject({ code: 'INVALID_REQUEST', provider: 'anthropic', retryable: false })
    expect(system.message).toMatch(/messages\[1\] has role "system"/)
    const reasoning = thrown(() =>
      serializeRequest(options({ messages: [createUserMessage([reasoningBlock('x', 's')])] }), settings),
    )
    expect(reasoning.message).toMatch(/messages\[0\] \(user\) holds a block of type reasoning/)
    const image = thrown(() =>
      serializeRequest(
        options({ messages: [createAssistantMessage([imageBlock('image/png', 'AA==')], origin)] }),
        settings,
      ),
    )
    expect(image.message).toMatch(/messages\[0\] \(assistant\) holds a block of type image/)
  })
})
