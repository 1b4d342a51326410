import type { CacheControlEphemeral, ContentBlockParam } from '@anthropic-ai/sdk/resources/messages'
import type { AnthropicCacheTtl } from './config.ts'
import type { AnthropicRequestBody } from './serialize-request.ts'

/** Anthropic accepts at most this many `cache_control` breakpoints per request. */
export const MAX_BREAKPOINTS = 4

/**
 * How far back a breakpoint looks for an earlier entry: the breakpoint's own block and the 19
 * before it. A request whose last breakpoint is more than 19 blocks past the previous write
 * misses, unless another breakpoint lies closer to that write.
 */
export const LOOKBACK_BLOCKS = 20

/** Where the conversation breakpoints go. */
export interface BreakpointPlacement {
  /** The TTL of every breakpoint of the request (one model, one TTL: mixed TTLs would need ordering). */
  readonly ttl: AnthropicCacheTtl
  /**
   * Message blocks at the end of the body that get no breakpoint: the one-off instruction of a
   * summary call, so its last breakpoint ends the replayed region (which is read) and no entry
   * is written for the instruction. Default 0.
   */
  readonly excludeTrailingBlocks?: number
  /**
   * The TTL of the message breakpoints, when it differs from `ttl` (which the static head keeps):
   * `5m` for a call that asks for the short tier (`GenerateOptions.cacheTtl: 'short'`). Anthropic
   * needs longer TTLs before shorter ones, which head-then-messages keeps. Default `ttl`.
   */
  readonly messageTtl?: AnthropicCacheTtl
}

/** The `cache_control` value of every breakpoint: `ephemeral`, with `ttl: '1h'` when configured. */
export function cacheControlFor(ttl: AnthropicCacheTtl): CacheControlEphemeral {
  return ttl === '1h' ? { type: 'ephemeral', ttl: '1h' } : { type: 'ephemeral' }
}

/**
 * Places the adapter's breakpoints on a copy of `body` (the input is not modified):
 *
 * 1. the end of the static head: the last system block, or, without a system prompt, the last
 *    tool definition (nothing when there are neither);
 * 2. the last message block that may carry one (thinking blocks may not), leaving out the
 *    `excludeTrailingBlocks` last blocks;
 * 3. with the breakpoints left ({@link MAX_BREAKPOINTS} in all), one every
 *    {@link LOOKBACK_BLOCKS} message blocks back from that one, so their lookback windows join
 *    up: a step that appends up to 59 blocks (79 without a static head breakpoint) still reads
 *    the previous request's prefix. A stride that lands on a thinking block
 *    moves forward to the next block that may carry one, so no gap opens between two windows.
 *
 * Every request therefore writes its whole prefix (writes are billed once, from the read
 * position to the last breakpoint, however many breakpoints lie between), and the next request
 * reads it back.
 */
export function placeBreakpoints(
  body: AnthropicRequestBody,
  placement: BreakpointPlacement | AnthropicCacheTtl,
): AnthropicRequestBody {
  const {
    ttl,
    excludeTrailingBlocks = 0,
    messageTtl = ttl,
  } = typeof placement === 'string' ? { ttl: placement } : placement
  const placed: AnthropicRequestBody = { ...body }
  let budget = MAX_BREAKPOINTS
  if (body.system?.length) {
    placed.system = body.system.map((block, index, blocks) =>
      index === blocks.length - 1 ? { ...block, cache_control: cacheControlFor(ttl) } : block,
    )
    budget -= 1
  } else if (body.tools?.length) {
    placed.tools = body.tools.map((tool, index, tools) =>
      index === tools.length - 1 ? { ...tool, cache_control: cacheControlFor(ttl) } : tool,
    )
    budget -= 1
  }
  const blocks = body.messages.flatMap((message, messageIndex) =>
    message.content.map((block, blockIndex) => ({ block, messageIndex, blockIndex })),
  )
  const marked = messageBreakpoints(
    // Thinking blocks cannot carry one.
    blocks.map(({ block }) => block.type !== 'thinking' && block.type !== 'redacted_thinking'),
    blocks.length - excludeTrailingBlocks,
    budget,
  )
  if (marked.length === 0) return placed
  const targets = new Set(marked.map((position) => `${blocks[position]!.messageIndex}:${blocks[position]!.blockIndex}`))
  placed.messages = body.messages.map((message, messageIndex) =>
    message.content.some((_block, blockIndex) => targets.has(`${messageIndex}:${blockIndex}`))
      ? {
          ...message,
          content: message.content.map((block, blockIndex) =>
            targets.has(`${messageIndex}:${blockIndex}`)
              ? ({ ...block, cache_control: cacheControlFor(messageTtl) } as ContentBlockParam)
              : block,
          ),
        }
      : message,
  )
  return placed
}

/**
 * Positions (in flattened message-block order, ascending) that get a breakpoint: the last
 * eligible block before `end`, then up to `budget − 1` more at {@link LOOKBACK_BLOCKS} strides
 * back, each moved forward past ineligible blocks.
 */
export function messageBreakpoints(eligible: readonly boolean[], end: number, budget: number): number[] {
  const positions: number[] = []
  let last = -1
  for (let index = Math.min(end, eligible.length) - 1; index >= 0; index--) {
    if (eligible[index]) {
      last = index
      break
    }
  }
  if (last < 0 || budget <= 0) return positions
  positions.push(last)
  while (positions.length < budget) {
    const previous = positions.at(-1)!
    let target = previous - LOOKBACK_BLOCKS
    if (target < 0) break
    while (target < previous && !eligible[target]) target += 1
    if (target >= previous) break
    positions.push(target)
  }
  return positions.toReversed()
}
