import type { CacheControlEphemeral, ContentBlockParam } from '@anthropic-ai/sdk/resources/messages'
import type { AnthropicCacheTtl } from './config.ts'
import type { AnthropicRequestBody } from './serialize-request.ts'

/** Anthropic accepts at most this many `cache_control` breakpoints per request. */
export const MAX_BREAKPOINTS = 4

/** The `cache_control` value of every breakpoint: `ephemeral`, with `ttl: '1h'` when configured. */
export function cacheControlFor(ttl: AnthropicCacheTtl): CacheControlEphemeral {
  return ttl === '1h' ? { type: 'ephemeral', ttl: '1h' } : { type: 'ephemeral' }
}

/**
 * Places the adapter's two breakpoints on a copy of `body` (the input is not modified):
 *
 * 1. the end of the static head: the last system block, or, without a system prompt, the last
 *    tool definition (nothing when there are neither);
 * 2. the last content block of the last message that may carry one (thinking blocks may not).
 *
 * Every request therefore writes its whole prefix, and the next request, which appends a few
 * blocks, reads it back within Anthropic's 20-block lookback. Two breakpoints stay well under
 * the limit of {@link MAX_BREAKPOINTS}.
 */
export function placeBreakpoints(body: AnthropicRequestBody, ttl: AnthropicCacheTtl): AnthropicRequestBody {
  const placed: AnthropicRequestBody = { ...body }
  if (body.system?.length) {
    placed.system = body.system.map((block, index, blocks) => (index === blocks.length - 1 ? { ...block, cache_control: cacheControlFor(ttl) } : block))
  } else if (body.tools?.length) {
    placed.tools = body.tools.map((tool, index, tools) => (index === tools.length - 1 ? { ...tool, cache_control: cacheControlFor(ttl) } : tool))
  }
  const last = body.messages.at(-1)
  if (last) {
    const target = last.content.findLastIndex(canCarryBreakpoint)
    if (target >= 0) {
      const content = last.content.map((block, index) => (index === target ? ({ ...block, cache_control: cacheControlFor(ttl) } as ContentBlockParam) : block))
      placed.messages = [...body.messages.slice(0, -1), { ...last, content }]
    }
  }
  return placed
}

function canCarryBreakpoint(block: ContentBlockParam): boolean {
  return block.type !== 'thinking' && block.type !== 'redacted_thinking'
}
