import { createHash } from 'node:crypto'

/** Anthropic's read lookback: a breakpoint and the 19 blocks before it. */
export const LOOKBACK_BLOCKS = 20

/** Simulated usage for one request, in Anthropic's shape. */
export interface SimulatedUsage {
  input_tokens: number
  cache_creation_input_tokens: number
  cache_read_input_tokens: number
  cache_creation: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number }
}

interface Block {
  readonly hash: string
  readonly tokens: number
  readonly breakpoint?: { ttl?: string }
}

/** `value` without any `cache_control` member (the marker is not part of the cached prefix). */
export function stripCacheControl(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stripCacheControl)
  if (typeof value !== 'object' || value === null) return value
  const copy: Record<string, unknown> = {}
  for (const [key, member] of Object.entries(value)) if (key !== 'cache_control') copy[key] = stripCacheControl(member)
  return copy
}

/**
 * A small model of Anthropic prompt caching, for the test server's usage numbers (TTL and
 * eviction ignored): the prompt is the block sequence tools → system → message blocks; each
 * block's prefix has a chained hash (message blocks also hash the thinking config, since
 * thinking changes invalidate the message level only); a request reads the longest prefix
 * whose hash was written, looking back at most {@link LOOKBACK_BLOCKS} blocks from each of its
 * breakpoints, and writes an entry at each breakpoint. Tokens are `ceil(JSON length / 4)`.
 */
export class PromptCacheSimulator {
  private readonly entries = new Set<string>()

  /** Usage of `body` (a parsed Messages API request), recording its writes. */
  usageFor(body: any): SimulatedUsage {
    const blocks = this.blocksOf(body)
    const breakpoints = blocks.flatMap((block, index) => (block.breakpoint ? [index] : []))
    let readEnd = -1
    for (const position of breakpoints) {
      for (let index = position; index >= 0 && index > position - LOOKBACK_BLOCKS; index--) {
        if (this.entries.has(blocks[index]!.hash)) {
          readEnd = Math.max(readEnd, index)
          break
        }
      }
    }
    const lastBreakpoint = breakpoints.at(-1) ?? -1
    const sum = (from: number, to: number) =>
      blocks.slice(from, to + 1).reduce((total, block) => total + block.tokens, 0)
    const read = sum(0, readEnd)
    const creation = lastBreakpoint > readEnd ? sum(readEnd + 1, lastBreakpoint) : 0
    const input = sum(Math.max(readEnd, lastBreakpoint) + 1, blocks.length - 1)
    for (const position of breakpoints) this.entries.add(blocks[position]!.hash)
    const oneHour = blocks[lastBreakpoint]?.breakpoint?.ttl === '1h'
    return {
      input_tokens: input,
      cache_creation_input_tokens: creation,
      cache_read_input_tokens: read,
      cache_creation: {
        ephemeral_5m_input_tokens: oneHour ? 0 : creation,
        ephemeral_1h_input_tokens: oneHour ? creation : 0,
      },
    }
  }

  private blocksOf(body: any): Block[] {
    const blocks: Block[] = []
    let hash = createHash('sha256').update(`model:${body.model}`).digest('hex')
    const push = (value: any, level: string) => {
      const key = JSON.stringify(stripCacheControl(value))
      hash = createHash('sha256').update(`${hash}\n${level}\n${key}`).digest('hex')
      blocks.push({
        hash,
        tokens: Math.ceil(key.length / 4),
        ...(value.cache_control ? { breakpoint: value.cache_control } : {}),
      })
    }
    for (const tool of body.tools ?? []) push(tool, 'tools')
    for (const block of body.system ?? []) push(block, 'system')
    const thinking = JSON.stringify(body.thinking ?? null)
    for (const message of body.messages ?? []) {
      for (const block of message.content) push(block, `messages:${thinking}:${message.role}`)
    }
    return blocks
  }
}
