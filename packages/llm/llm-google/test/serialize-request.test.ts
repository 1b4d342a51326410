import type { Message, ToolDefinition } from '@warmfold/llm'
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
import { GoogleLlmAdapter, parseGoogleConfig } from '../src/index.ts'
import { MODEL, MODEL_3, MODELS, request, TEST_KEY } from './fixture.ts'

const adapter = new GoogleLlmAdapter(parseGoogleConfig({ apiKey: TEST_KEY, models: MODELS }), TEST_KEY)
const origin = { provider: 'google', model: MODEL_3 }
const tools: ToolDefinition[] = [
  {
    name: 'read',
    description: 'Read a file',
    parameters: {
      type: 'object',
      required: ['path'],
      properties: { path: { type: 'string' }, limit: { type: 'integer' } },
    },
  },
  {
    name: 'write',
    description: 'Write a file',
    parameters: { type: 'object', properties: { path: { type: 'string' } } },
  },
]

const messages = (id: string) => [createMessage({ id, role: 'user', content: 'hi' })]

/** The error `request()` throws for `messages`, as `CODE: message`. */
function fails(messages: Message[]): string {
  try {
    adapter.request(request({ messages }))
  } catch (error) {
    return LlmError.isInstance(error) ? `${error.code}: ${error.message}` : String(error)
  }
  return 'no error'
}

describe('request serialization', () => {
  it('writes systemInstruction, tools (in order, JSON schema as parametersJsonSchema), contents and generationConfig', () => {
    const body = adapter.request(
      request({
        model: MODEL_3,
        system: 'You are a coding agent.',
        tools,
        reasoningEffort: 'high',
        temperature: 0.2,
        stop: ['<halt>'],
        maxTokens: 900,
        messages: [
          createUserMessage([textBlock('Look at this'), imageBlock('image/png', 'iVBORw0KGgo=')]),
          createAssistantMessage(
            [
              reasoningBlock('plan', 'c2ln'),
              textBlock('Reading.'),
              toolCallBlock('fc-1', 'read', '{"path": "a.ts"}', 'Y2FsbA=='),
            ],
            origin,
          ),
          createToolResultMessage('fc-1', 'export const a = 1'),
          createUserMessage('Now explain.'),
        ],
      }),
    )
    expect(JSON.stringify(body)).toMatchInlineSnapshot(
      `"{"contents":[{"parts":[{"text":"Look at this"},{"inlineData":{"mimeType":"image/png","data":"iVBORw0KGgo="}}],"role":"user"},{"parts":[{"text":"plan","thought":true,"thoughtSignature":"c2ln"},{"text":"Reading."},{"functionCall":{"args":{"path":"a.ts"},"id":"fc-1","name":"read"},"thoughtSignature":"Y2FsbA=="}],"role":"model"},{"parts":[{"functionResponse":{"id":"fc-1","name":"read","response":{"output":"export const a = 1"}}},{"text":"Now explain."}],"role":"user"}],"systemInstruction":{"parts":[{"text":"You are a coding agent."}]},"tools":[{"functionDeclarations":[{"name":"read","description":"Read a file","parametersJsonSchema":{"properties":{"limit":{"type":"integer"},"path":{"type":"string"}},"required":["path"],"type":"object"}},{"name":"write","description":"Write a file","parametersJsonSchema":{"properties":{"path":{"type":"string"}},"type":"object"}}]}],"generationConfig":{"temperature":0.2,"maxOutputTokens":900,"stopSequences":["<halt>"],"thinkingConfig":{"includeThoughts":true,"thinkingLevel":"HIGH"}}}"`,
    )
  })

  it('maps effort to thinkingBudget on Gemini 2.5 (0 turns it off, -1 is dynamic) and thinkingLevel on Gemini 3', () => {
    const thinking = (model: string, reasoningEffort?: string) =>
      adapter.request(request({ model, reasoningEffort })).generationConfig
    expect(thinking(MODEL)).toEqual({ maxOutputTokens: 8192 })
    expect(thinking(MODEL, 'off')).toEqual({ maxOutputTokens: 8192, thinkingConfig: { thinkingBudget: 0 } })
    expect(thinking(MODEL, 'low')).toEqual({
      maxOutputTokens: 8192,
      thinkingConfig: { includeThoughts: true, thinkingBudget: 1024 },
    })
    expect(thinking(MODEL, 'dynamic')).toEqual({
      maxOutputTokens: 8192,
      thinkingConfig: { includeThoughts: true, thinkingBudget: -1 },
    })
    expect(thinking(MODEL_3, 'low')).toEqual({ thinkingConfig: { includeThoughts: true, thinkingLevel: 'LOW' } })
    expect(() => thinking(MODEL_3, 'off')).toThrow(
      expect.objectContaining({
        code: 'UNSUPPORTED_REASONING_EFFORT',
        message: expect.stringMatching(/known efforts: low, high/),
      }),
    )
    expect(adapter.resolveModel('google', MODEL)).toMatchObject({
      reasoning: { efforts: ['off', 'low', 'medium', 'high', 'dynamic'] },
    })
    expect(adapter.resolveModel('google', MODEL).cacheTtlMs).toBeUndefined()
  })

  it('takes per-model budget and level tables from the config, and leaves includeThoughts out when turned off', () => {
    const custom = new GoogleLlmAdapter(
      parseGoogleConfig({
        apiKey: TEST_KEY,
        includeThoughts: false,
        models: {
          'gemini-2.5-pro': { contextWindow: 1000, thinkingBudgets: { low: 128, max: 32768 } },
          'my-gemini': { contextWindow: 1000, thinkingLevels: { quick: 'minimal' } },
        },
      }),
      TEST_KEY,
    )
    expect(custom.request(request({ model: 'gemini-2.5-pro', reasoningEffort: 'max' })).generationConfig).toEqual({
      thinkingConfig: { thinkingBudget: 32768 },
    })
    expect(custom.request(request({ model: 'my-gemini', reasoningEffort: 'quick' })).generationConfig).toEqual({
      thinkingConfig: { thinkingLevel: 'MINIMAL' },
    })
    expect(() =>
      parseGoogleConfig({
        models: { m: { contextWindow: 1, thinkingBudgets: { a: 1 }, thinkingLevels: { b: 'low' } } },
      }),
    ).toThrow(/exclusive/)
    expect(() => parseGoogleConfig({ models: { m: { contextWindow: 1, thinkingLevels: { b: 'extreme' } } } })).toThrow(
      TypeError,
    )
  })

  it('leaves provenance out of the bytes: ids, sources, purpose and session id change nothing', () => {
    const a = JSON.stringify(
      adapter.request(request({ messages: messages('a'), purpose: 'conversation', sessionId: 's1' })),
    )
    const b = JSON.stringify(
      adapter.request(request({ messages: messages('b'), purpose: 'compaction', sessionId: 's2' })),
    )
    expect(a).toBe(b)
  })

  it('rejects content Gemini cannot take, naming where it is', () => {
    expect(fails([createMessage({ role: 'system', content: 'x' })])).toMatch(
      /^INVALID_REQUEST: .*messages\[0\] has role "system"/,
    )
    expect(fails([createToolResultMessage('nowhere', 'x')])).toMatch(
      /^INVALID_REQUEST: .*messages\[0\] answers tool call "nowhere"/,
    )
  })
})
