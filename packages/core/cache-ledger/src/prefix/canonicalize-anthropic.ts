import type { CanonicalMessage, CanonicalRequest, EnvelopeRules } from './canonical-request.ts'
import { arrayOf, collectEnvelope, isRecord, listOf, modelOf, recordOf, stringOf } from './canonical-request.ts'
import { withoutKeys } from './canonical-json.ts'

/**
 * Anthropic Messages (`POST …/v1/messages`; also Bedrock's and Vertex's bodies, whose
 * `anthropic_version` is kept).
 */
const ANTHROPIC_RULES: EnvelopeRules = {
  structural: ['messages', 'system', 'tools', 'output_config'],
  // A top-level cache_control turns on automatic caching: it marks, it does not shape the prompt.
  noise: ['stream', 'metadata', 'max_tokens', 'service_tier', 'cache_control', 'container'],
  renames: {
    top_p: 'topP',
    top_k: 'topK',
    stop_sequences: 'stop',
    tool_choice: 'toolChoice',
  },
}

const MARKERS = ['cache_control']

/**
 * Canonical form of a Messages body: `cache_control` breakpoints are removed from system
 * blocks, tools, messages and content blocks (they move every turn and are not prompt text);
 * `output_config.effort` is the reasoning effort and `output_config.format` the response
 * format; `thinking` stays `thinking`; the `anthropic-beta` header is the `anthropicBeta` setting.
 */
export function canonicalizeAnthropic(
  body: Readonly<Record<string, unknown>>,
  headers: Readonly<Record<string, string>>,
): CanonicalRequest {
  const envelope = collectEnvelope(body, ANTHROPIC_RULES)
  if (body.output_config !== undefined && body.output_config !== null) {
    const config = recordOf(body.output_config, 'output_config')
    if (config.effort !== undefined && config.effort !== null) envelope.reasoningEffort = config.effort
    if (config.format !== undefined && config.format !== null) envelope.responseFormat = config.format
    for (const [key, value] of Object.entries(withoutKeys(config, ['effort', 'format'])))
      envelope[`output_config.${key}`] = value
  }
  if (headers['anthropic-beta'] !== undefined) envelope.anthropicBeta = headers['anthropic-beta']
  const messages: CanonicalMessage[] = arrayOf(body.messages, 'messages').map((item, index) => {
    const message = recordOf(item, `messages[${index}]`)
    const role = stringOf(message.role, `messages[${index}].role`)
    const value = withoutKeys(message, MARKERS)
    value.content = blocks(message.content, `messages[${index}].content`)
    return { role, index, value }
  })
  const tools = listOf(body.tools, 'tools').map((tool) => (isRecord(tool) ? withoutKeys(tool, MARKERS) : tool))
  return {
    api: 'anthropic-messages',
    model: modelOf(body),
    envelope,
    ...(body.system === undefined || body.system === null ? {} : { system: blocks(body.system, 'system') }),
    tools,
    messages,
  }
}

/** Content as blocks without markers: a string is one text block (the API reads both alike). */
function blocks(content: unknown, what: string): unknown[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }]
  return arrayOf(content, what).map((block) => (isRecord(block) ? stripMarkers(block) : block))
}

/** A block without `cache_control`, also inside a `tool_result`'s own content blocks. */
function stripMarkers(block: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const value = withoutKeys(block, MARKERS)
  if (Array.isArray(block.content))
    value.content = block.content.map((inner) => (isRecord(inner) ? withoutKeys(inner, MARKERS) : inner))
  return value
}
