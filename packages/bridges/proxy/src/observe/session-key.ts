import type { RequestApi } from '@warmfold/cache-ledger/prefix'
import { isRecord } from '@warmfold/cache-ledger/prefix'

/**
 * Request headers agents send to name their session, in the order they are read: Claude Code's
 * (with its subagent id, so a subagent is a session of its own), Qwen Code's, Codex's
 * (`session_id`, newer `x-codex-session-id`), then generic names gateways use.
 */
const SESSION_HEADERS = [
  'x-claude-code-session-id',
  'x-qwen-code-session-id',
  'session_id',
  'x-codex-session-id',
  'session-id',
  'x-session-id',
] as const

/** Where a request's session came from. */
export interface SessionKey {
  /** The key sessions are grouped by (api and source included, so two APIs never share one). */
  readonly key: string
  /** `header <name>`, `body prompt_cache_key`, `body metadata.user_id`. */
  readonly by: string
}

/**
 * The session a request names, or undefined when it names none (then prefix containment groups
 * it): a session header; else the body's Responses `prompt_cache_key` (Codex sets it to its
 * conversation id) or Anthropic `metadata.user_id` (Claude Code puts its session id in it).
 */
export function sessionKeyOf(
  api: RequestApi,
  headers: Readonly<Record<string, string>>,
  json: Readonly<Record<string, unknown>>,
): SessionKey | undefined {
  for (const name of SESSION_HEADERS) {
    const value = headers[name]
    if (value === undefined || value === '') continue
    const agent = name === 'x-claude-code-session-id' ? headers['x-claude-code-agent-id'] : undefined
    return { key: `${api} ${name}=${value}${agent ? ` agent=${agent}` : ''}`, by: `header ${name}` }
  }
  if (api === 'openai-responses' && typeof json.prompt_cache_key === 'string' && json.prompt_cache_key !== '')
    return { key: `${api} prompt_cache_key=${json.prompt_cache_key}`, by: 'body prompt_cache_key' }
  if (api === 'anthropic-messages' && isRecord(json.metadata) && typeof json.metadata.user_id === 'string')
    return { key: `${api} user_id=${json.metadata.user_id}`, by: 'body metadata.user_id' }
  return undefined
}

/** Known agents by what their `user-agent` or `originator` header starts with or contains. */
const AGENTS: ReadonlyArray<readonly [RegExp, string]> = [
  [/claude-cli|claude-code/i, 'Claude Code'],
  [/codex/i, 'Codex'],
  [/GeminiCLI|gemini-cli/i, 'Gemini CLI'],
  [/QwenCode|qwen-code/i, 'Qwen Code'],
  [/opencode/i, 'opencode'],
  [/^pi[/ ]/i, 'pi'],
  [/^Anthropic\//, 'Anthropic SDK'],
  [/^OpenAI\//, 'OpenAI SDK'],
  [/google-genai-sdk/i, 'Google Gen AI SDK'],
]

/** A guess at the agent from its headers: a known name, else the user-agent's first word, else `unknown`. */
export function agentOf(headers: Readonly<Record<string, string>>): string {
  const said = `${headers.originator ?? ''} ${headers['user-agent'] ?? ''} ${headers['x-goog-api-client'] ?? ''}`.trim()
  for (const [pattern, name] of AGENTS) if (pattern.test(headers.originator ?? '') || pattern.test(said)) return name
  const first = (headers['user-agent'] ?? '').split(/\s+/)[0]
  return first ? first.slice(0, 60) : 'unknown'
}
