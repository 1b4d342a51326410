import { describe, expect, it } from 'vitest'
import { routeOf } from '../src/index.ts'

describe('routeOf', () => {
  const cases: ReadonlyArray<[string, string, string | undefined, string, boolean]> = [
    ['POST', '/v1/messages', 'anthropic-messages', 'generate', false],
    ['POST', '/messages?beta=true', 'anthropic-messages', 'generate', false],
    ['POST', '/anthropic/v1/messages/count_tokens', 'anthropic-messages', 'count-tokens', false],
    ['POST', '/v1/chat/completions', 'openai-chat', 'generate', false],
    ['POST', '/api/openai/chat/completions/', 'openai-chat', 'generate', false],
    ['POST', '/v1/responses', 'openai-responses', 'generate', false],
    ['POST', '/responses', 'openai-responses', 'generate', false],
    ['POST', '/v1/responses/compact', undefined, 'other', false],
    ['GET', '/v1/responses/resp_123', undefined, 'other', false],
    ['POST', '/v1/responses/resp_123/cancel', undefined, 'other', false],
    ['POST', '/v1beta/models/gemini-2.5-flash:generateContent', 'gemini', 'generate', false],
    ['POST', '/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse', 'gemini', 'generate', true],
    ['POST', '/v1beta/models/gemini-2.5-flash:countTokens', 'gemini', 'count-tokens', false],
    ['POST', '/v1/projects/p/locations/l/publishers/google/models/g:generateContent', 'gemini', 'generate', false],
    ['GET', '/v1/models', undefined, 'models', false],
    ['GET', '/models', undefined, 'models', false],
    ['GET', '/v1beta/models?pageSize=50', undefined, 'models', false],
    ['GET', '/v1beta/models/gemini-2.5-flash', undefined, 'other', false],
    ['GET', '/v1/messages', undefined, 'other', false],
    ['POST', '/v1/embeddings', undefined, 'other', false],
    ['DELETE', '/v1/models', undefined, 'other', false],
  ]
  for (const [method, path, api, kind, streamByPath] of cases)
    it(`${method} ${path} is ${kind}${api ? ` (${api})` : ''}`, () => {
      expect(routeOf(method, path)).toEqual({ api, kind, streamByPath })
    })
})
