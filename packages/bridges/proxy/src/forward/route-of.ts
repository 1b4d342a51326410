import type { RouteMatch } from '../proxy-exchange.ts'

const OTHER: RouteMatch = { api: undefined, kind: 'other', streamByPath: false }

/**
 * What a request is, from its method and path alone (the query is ignored). Paths are matched by
 * their end, so any base-path prefix a client puts in its base URL (`/v1`, `/api/openai/v1`,
 * nothing) is accepted:
 *
 * - `POST …/messages` (Anthropic, generate), `POST …/messages/count_tokens` (count-tokens);
 * - `POST …/chat/completions` (OpenAI Chat), `POST …/responses` (OpenAI Responses; not
 *   `/responses/compact` nor `/responses/{id}`, which are `other`);
 * - `POST …/<model>:generateContent`, `:streamGenerateContent` (streamed by path), `:countTokens` (Gemini);
 * - `GET …/models` (any API's models list).
 *
 * Anything else is `other`: forwarded unread.
 */
export function routeOf(method: string, path: string): RouteMatch {
  const query = path.indexOf('?')
  const bare = (query === -1 ? path : path.slice(0, query)).replace(/\/+$/, '')
  const verb = method.toUpperCase()
  if (verb === 'GET') return bare.endsWith('/models') ? { api: undefined, kind: 'models', streamByPath: false } : OTHER
  if (verb !== 'POST') return OTHER
  if (bare.endsWith('/messages')) return { api: 'anthropic-messages', kind: 'generate', streamByPath: false }
  if (bare.endsWith('/messages/count_tokens'))
    return { api: 'anthropic-messages', kind: 'count-tokens', streamByPath: false }
  if (bare.endsWith('/chat/completions')) return { api: 'openai-chat', kind: 'generate', streamByPath: false }
  if (bare.endsWith('/responses')) return { api: 'openai-responses', kind: 'generate', streamByPath: false }
  const gemini = /\/[^/:]+:(generateContent|streamGenerateContent|countTokens)$/.exec(bare)
  if (gemini) {
    const method = gemini[1]
    if (method === 'countTokens') return { api: 'gemini', kind: 'count-tokens', streamByPath: false }
    return { api: 'gemini', kind: 'generate', streamByPath: method === 'streamGenerateContent' }
  }
  return OTHER
}
