import type { CanonicalMessage, CanonicalRequest, EnvelopeRules } from './canonical-request.ts'
import { arrayOf, collectEnvelope, isRecord, listOf, modelOf, recordOf, stringOf } from './canonical-request.ts'
import { withoutKeys } from './canonical-json.ts'

/**
 * OpenAI Chat Completions (`POST …/chat/completions`, also what DeepSeek, vLLM, SGLang,
 * llama.cpp, OpenRouter and LiteLLM accept).
 */
const OPENAI_CHAT_RULES: EnvelopeRules = {
  structural: ['messages', 'tools', 'functions'],
  noise: [
    'stream',
    'stream_options',
    'metadata',
    'user',
    'store',
    'service_tier',
    'safety_identifier',
    'max_tokens',
    'max_completion_tokens',
    'n',
    'seed',
    'logprobs',
    'top_logprobs',
    'prediction',
    'prompt_cache_retention',
    'prompt_cache_options',
  ],
  renames: {
    reasoning_effort: 'reasoningEffort',
    top_p: 'topP',
    top_k: 'topK',
    tool_choice: 'toolChoice',
    function_call: 'toolChoice',
    parallel_tool_calls: 'parallelToolCalls',
    response_format: 'responseFormat',
    prompt_cache_key: 'promptCacheKey',
  },
}

/**
 * Cache breakpoint markers on messages and parts: `cache_control` (OpenRouter, LiteLLM) and
 * OpenAI's explicit `prompt_cache_breakpoint`. They move with every request and never reach the prompt.
 */
const MARKERS = ['cache_control', 'prompt_cache_breakpoint']

/** Canonical form of a Chat Completions body: leading `system`/`developer` messages are the system prompt. */
export function canonicalizeOpenAiChat(body: Readonly<Record<string, unknown>>): CanonicalRequest {
  const raw = arrayOf(body.messages, 'messages')
  const messages: CanonicalMessage[] = raw.map((item, index) => chatMessage(item, index))
  let head = 0
  while (head < messages.length && (messages[head]?.role === 'system' || messages[head]?.role === 'developer')) head++
  const tools = [
    ...listOf(body.tools, 'tools').map((tool) => (isRecord(tool) ? withoutKeys(tool, MARKERS) : tool)),
    ...listOf(body.functions, 'functions').map((definition) => ({ type: 'function', function: definition })),
  ]
  return {
    api: 'openai-chat',
    model: modelOf(body),
    envelope: collectEnvelope(body, OPENAI_CHAT_RULES),
    ...(head > 0 ? { system: messages.slice(0, head).map((message) => message.value) } : {}),
    tools,
    messages: messages.slice(head),
  }
}

function chatMessage(item: unknown, index: number): CanonicalMessage {
  const message = recordOf(item, `messages[${index}]`)
  const role = stringOf(message.role, `messages[${index}].role`)
  const value = withoutKeys(message, MARKERS)
  const content = message.content
  // "hi" and [{ type: 'text', text: 'hi' }] are the same prompt.
  if (typeof content === 'string') value.content = [{ type: 'text', text: content }]
  else if (Array.isArray(content))
    value.content = content.map((part) => (isRecord(part) ? withoutKeys(part, MARKERS) : part))
  return { role, index, value }
}
