import { describe, expect, it } from 'vitest'
import { ChatRequestError, parseChatRequest } from '../src/chat-request.ts'

const user = { role: 'user', content: 'hi' }

describe('parseChatRequest', () => {
  it('turns a wire request into template variables', () => {
    const request = parseChatRequest({
      model: 'tiny',
      messages: [
        {
          role: 'system',
          content: [
            { type: 'text', text: 'a' },
            { type: 'text', text: 'b' },
          ],
        },
        user,
        {
          role: 'assistant',
          content: null,
          reasoning_content: 'r',
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read', arguments: '{}' } }],
        },
        { role: 'tool', tool_call_id: 'c1', content: 'out' },
      ],
      tools: [{ type: 'function', function: { name: 'read' } }],
      reasoning_effort: 'high',
      max_tokens: 8,
      max_completion_tokens: 4,
      stream: true,
      stream_options: { include_usage: true },
      temperature: 0.7,
      tool_choice: 'auto',
    })
    expect(request).toEqual({
      prompt: {
        messages: [
          { role: 'system', content: 'a\nb' },
          { role: 'user', content: 'hi' },
          {
            role: 'assistant',
            content: null,
            reasoning_content: 'r',
            tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read', arguments: '{}' } }],
          },
          { role: 'tool', content: 'out', tool_call_id: 'c1' },
        ],
        tools: [{ type: 'function', function: { name: 'read' } }],
        reasoning_effort: 'high',
        add_generation_prompt: true,
      },
      model: 'tiny',
      maxTokens: 4,
      stream: true,
      includeUsage: true,
    })
  })

  it("renders DeepSeek's thinking: disabled as effort none, and enabled as the effort sent", () => {
    expect(
      parseChatRequest({ messages: [user], thinking: { type: 'disabled' }, reasoning_effort: 'max' }).prompt
        .reasoning_effort,
    ).toBe('none')
    expect(
      parseChatRequest({ messages: [user], thinking: { type: 'enabled' }, reasoning_effort: 'max' }).prompt
        .reasoning_effort,
    ).toBe('max')
    expect(parseChatRequest({ messages: [user] }).prompt).not.toHaveProperty('reasoning_effort')
  })

  it.each([
    [null, 'the request body must be a JSON object'],
    [{}, 'messages must be a non-empty array'],
    [{ messages: [] }, 'messages must be a non-empty array'],
    [{ messages: [{ role: 'robot', content: 'x' }] }, 'messages[0].role must be one of'],
    [{ messages: [{ role: 'user' }] }, 'messages[0].content is required for a user message'],
    [
      { messages: [{ role: 'user', content: [{ type: 'image_url', image_url: {} }] }] },
      'messages[0].content[0] must be a text part',
    ],
    [{ messages: [user, { role: 'tool', content: 'x' }] }, 'messages[1].tool_call_id must be a string'],
    [{ messages: [{ role: 'assistant', content: null, tool_calls: {} }] }, 'messages[0].tool_calls must be an array'],
    [
      {
        messages: [
          { role: 'assistant', content: null, tool_calls: [{ id: 'c', function: { name: 'f', arguments: {} } }] },
        ],
      },
      'messages[0].tool_calls[0].function.arguments must be a string',
    ],
    [
      { messages: [{ role: 'assistant', content: 'x', reasoning_content: 3 }] },
      'messages[0].reasoning_content must be a string',
    ],
    [{ messages: [user], tools: [{ type: 'function' }] }, 'tools[0] must be'],
    [{ messages: [user], max_tokens: 0 }, 'max_tokens must be a positive integer'],
    [{ messages: [user], max_completion_tokens: 1.5 }, 'max_completion_tokens must be a positive integer'],
    [{ messages: [user], n: 2 }, 'n must be 1'],
    [{ messages: [user], stream: 'yes' }, 'stream must be a boolean'],
    [{ messages: [user], stream_options: { include_usage: 1 } }, 'stream_options.include_usage must be a boolean'],
    [{ messages: [user], reasoning_effort: 'very high' }, 'reasoning_effort must be a word'],
    [{ messages: [user], thinking: { type: 'maybe' } }, 'thinking must be'],
    [{ messages: [user], model: 7 }, 'model must be a string'],
  ])('rejects %j naming the field', (body, message) => {
    expect(() => parseChatRequest(body)).toThrow(ChatRequestError)
    expect(() => parseChatRequest(body)).toThrow(message)
  })
})
