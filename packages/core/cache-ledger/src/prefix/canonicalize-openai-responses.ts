import type { CanonicalMessage, CanonicalRequest, EnvelopeRules } from './canonical-request.ts'
import {
  collectEnvelope,
  isRecord,
  listOf,
  modelOf,
  recordOf,
  RequestShapeError,
  stringOf,
} from './canonical-request.ts'
import { withoutKeys } from './canonical-json.ts'

/**
 * OpenAI Responses (`POST …/responses`). `previous_response_id`, `conversation` and `prompt`
 * stay in the envelope under their own names: the server prepends stored items the log does not
 * hold, so such requests only compare with requests that reference the same state.
 */
const OPENAI_RESPONSES_RULES: EnvelopeRules = {
  structural: ['input', 'instructions', 'tools', 'reasoning', 'text'],
  noise: [
    'stream',
    'stream_options',
    'metadata',
    'user',
    'store',
    'service_tier',
    'safety_identifier',
    'max_output_tokens',
    'max_tool_calls',
    'include',
    'background',
    'top_logprobs',
    'prompt_cache_retention',
    'prompt_cache_options',
  ],
  renames: {
    top_p: 'topP',
    tool_choice: 'toolChoice',
    parallel_tool_calls: 'parallelToolCalls',
    prompt_cache_key: 'promptCacheKey',
  },
}

/** Server object ids and statuses on replayed output items: they differ per response, not per prompt. */
const ITEM_NOISE = ['id', 'status']

/** OpenAI's explicit cache breakpoint on a content part: it moves with every request and is not prompt. */
const PART_MARKERS = ['prompt_cache_breakpoint', 'cache_control']

/**
 * Canonical form of a Responses body: `instructions` and leading `system`/`developer` input
 * items are the system prompt; a string `input` is one user message; `reasoning.effort` is the
 * reasoning effort and `text.format` the response format.
 */
export function canonicalizeOpenAiResponses(body: Readonly<Record<string, unknown>>): CanonicalRequest {
  const envelope = collectEnvelope(body, OPENAI_RESPONSES_RULES)
  if (body.reasoning !== undefined && body.reasoning !== null) {
    const reasoning = recordOf(body.reasoning, 'reasoning')
    if (reasoning.effort !== undefined && reasoning.effort !== null) envelope.reasoningEffort = reasoning.effort
    // The summary setting shapes the output, not the prompt.
    const rest = withoutKeys(reasoning, ['effort', 'summary', 'generate_summary'])
    if (Object.keys(rest).length) envelope.reasoning = rest
  }
  if (body.text !== undefined && body.text !== null) {
    const text = recordOf(body.text, 'text')
    if (text.format !== undefined && text.format !== null) envelope.responseFormat = text.format
    for (const [key, value] of Object.entries(withoutKeys(text, ['format']))) envelope[key] = value
  }
  const messages: CanonicalMessage[] =
    typeof body.input === 'string'
      ? [{ role: 'user', index: 0, value: { role: 'user', content: [{ type: 'input_text', text: body.input }] } }]
      : listOf(body.input, 'input').map((item, index) => inputItem(item, index))
  if (body.input === undefined && body.instructions === undefined)
    throw new RequestShapeError('a Responses body needs "input" or "instructions"')
  let head = 0
  while (head < messages.length && (messages[head]?.role === 'system' || messages[head]?.role === 'developer')) head++
  const system: unknown[] = []
  if (body.instructions !== undefined && body.instructions !== null)
    system.push({ role: 'instructions', content: body.instructions })
  for (const message of messages.slice(0, head)) system.push(message.value)
  const tools = listOf(body.tools, 'tools').map((tool) =>
    isRecord(tool) ? withoutKeys(tool, ['cache_control']) : tool,
  )
  return {
    api: 'openai-responses',
    model: modelOf(body),
    envelope,
    ...(system.length ? { system } : {}),
    tools,
    messages: messages.slice(head),
  }
}

function inputItem(item: unknown, index: number): CanonicalMessage {
  const record = recordOf(item, `input[${index}]`)
  const value = withoutKeys(record, ITEM_NOISE)
  if (record.type !== undefined && record.type !== 'message')
    return { role: stringOf(record.type, `input[${index}].type`), index, value }
  const role = stringOf(record.role, `input[${index}].role`)
  // { role, content } and { type: 'message', role, content } are the same message.
  delete value.type
  if (typeof record.content === 'string')
    value.content = [{ type: role === 'assistant' ? 'output_text' : 'input_text', text: record.content }]
  else if (Array.isArray(record.content))
    value.content = record.content.map((part) => (isRecord(part) ? withoutKeys(part, PART_MARKERS) : part))
  return { role, index, value }
}
