import { COMPACTION_INSTRUCTION } from '@warmfold/compaction-basic'
import { afterEach, describe, expect, it } from 'vitest'
import { breakpointCount } from '../../../../../llm/llm-anthropic/test/adapter-fixture.ts'
import type { Exchange, LoopHarness } from './loop-fixture.ts'
import { breakpointPaths, isCompaction, mountLoop, strippedMessages } from './loop-fixture.ts'
import { stripCacheControl } from '../../../../../llm/llm-anthropic/test/prompt-cache-simulator.ts'

const harnesses: LoopHarness[] = []
afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.dispose()
})

async function harness(options: Parameters<typeof mountLoop>[0] = {}): Promise<LoopHarness> {
  const created = await mountLoop(options)
  harnesses.push(created)
  return created
}

const ephemeral = { type: 'ephemeral' }
const ENVELOPE_KEYS = ['model', 'tools', 'system', 'thinking', 'temperature', 'stop_sequences'] as const
const instructionTokens = Math.ceil(JSON.stringify({ type: 'text', text: COMPACTION_INSTRUCTION }).length / 4)
const promptTotal = (exchange: Exchange) =>
  exchange.usage.cache_read_input_tokens + exchange.usage.cache_creation_input_tokens + exchange.usage.input_tokens
const isSummary = (exchange: Exchange) => exchange.call.purpose === 'compaction'

/** Flattened message-block positions that carry a breakpoint. */
function markedBlocks(body: any): number[] {
  return body.messages
    .flatMap((message: any) => message.content)
    .flatMap((block: any, index: number) => (block.cache_control ? [index] : []))
}

/**
 * The static head and the first `count` message blocks (each with its role), markers removed, as
 * JSON: the prompt bytes the cache sees up to a position.
 */
function promptThrough(body: any, count: number): string {
  const blocks = body.messages.flatMap((message: any) => message.content.map((block: any) => [message.role, block]))
  return JSON.stringify(stripCacheControl({ tools: body.tools, system: body.system, blocks: blocks.slice(0, count) }))
}

/** The breakpoint policy on one body: head, last eligible block before `end`, strides of at most 20 blocks back. */
function expectPolicy(body: any, end: number): void {
  const marked = markedBlocks(body)
  expect(breakpointPaths(body)[0]).toBe('system[0]')
  expect(marked.at(-1)).toBe(end - 1)
  expect(marked.length).toBeLessThanOrEqual(3)
  // Strides join the lookback windows; a full set unless the first stride is near the start.
  marked.slice(1).forEach((position, index) => expect(position - marked[index]!).toBeLessThanOrEqual(20))
  if (marked.length < 3) expect(marked[0]).toBeLessThan(20)
}

const blockCount = (body: any): number =>
  body.messages.reduce((count: number, message: any) => count + message.content.length, 0)

/** The conversation exchange sent right before exchange `index`. */
function conversationBefore(exchanges: Exchange[], index: number): Exchange {
  const before = exchanges.slice(0, index).findLast((exchange) => !isSummary(exchange))
  if (!before) throw new Error(`no conversation request before exchange ${index}`)
  return before
}

// A whole session over HTTP: about 3 s alone, more on a loaded machine, so not the default 5 s.
describe('through the real agent loop and BasicCompactionEngine', { timeout: 30_000 }, () => {
  it('keeps every conversation request append-only on the wire, and each summary call a replay of the routed prefix plus one instruction', async () => {
    const loop = await harness()
    const agent = await loop.run()
    const exchanges = loop.exchanges()
    const events = agent.session.events

    // The last turn/end: a background fold may be swapped in after it, while the agent is idle.
    expect(events.findLast((event) => event.type === 'turn/end')).toMatchObject({ data: { reason: 'stop', steps: 31 } })
    expect(exchanges).toHaveLength(loop.server.requests.length)
    for (const exchange of exchanges)
      expect(isCompaction(exchange.request.body), `purpose ${exchange.call.purpose}`).toBe(isSummary(exchange))
    const summaries = exchanges.filter(isSummary)
    expect(summaries.length).toBeGreaterThanOrEqual(1)
    expect(
      events
        .filter((event) => event.type === 'compaction/end')
        .every((event) => !(event.data as { error?: string }).error),
    ).toBe(true)

    // The envelope of every request: effort high → thinking, temperature unset, stop set.
    for (const { request } of exchanges) {
      expect(request.body).toMatchObject({
        model: 'claude-loop',
        thinking: { type: 'enabled', budget_tokens: 1024 },
        stop_sequences: ['<halt>'],
        stream: true,
      })
      expect(request.body).not.toHaveProperty('temperature')
      expect(request.body.tools.map((tool: { name: string }) => tool.name)).toEqual(['read', 'write'])
    }

    // C1: each conversation request keeps every earlier message byte-identical (markers aside),
    // except right after a summary, where the logged checkpoint replaced the region.
    const replaces = events.filter((event) => event.surface && event.surface.op === 'replace')
    expect(replaces).toHaveLength(summaries.length)
    // A background fold sends its summary beside the conversation and swaps the checkpoint in at
    // a later request boundary: a rewrite follows a summary, not necessarily at once.
    let rewrites = 0
    let pending = 0
    let previous: { exchange: Exchange; index: number } | undefined
    for (const [index, exchange] of exchanges.entries()) {
      if (isSummary(exchange)) {
        pending++
        continue
      }
      const { body, rawBody } = exchange.request
      expectPolicy(body, blockCount(body))
      expect(breakpointCount(rawBody)).toBe(markedBlocks(body).length + 1)
      if (previous) {
        const before = strippedMessages(previous.exchange.request.body)
        const after = strippedMessages(body)
        for (const key of ENVELOPE_KEYS)
          expect(JSON.stringify(body[key]), key).toBe(JSON.stringify(previous.exchange.request.body[key]))
        if (!before.every((message, position) => after[position] === message)) {
          expect(pending, `request ${index} rewrote history without a summary to swap in`).toBeGreaterThan(0)
          pending--
          rewrites += 1
          expect(after[0]).toContain('<compacted-summary>')
          // The static head (tools, system) is still a cache read after the fold.
          expect(exchange.usage.cache_read_input_tokens).toBeGreaterThan(0)
        } else {
          after
            .slice(0, before.length)
            .forEach((message, position) =>
              expect(message, `request ${index}, message ${position}`).toBe(before[position]),
            )
          expect(after).toHaveLength(before.length + 2)
          // The previous request's whole prompt is read back through the last-message breakpoint.
          expect(exchange.usage.cache_read_input_tokens).toBe(promptTotal(previous.exchange))
          // The replayed assistant turn carries its thinking (with signature) first, then text, then tool_use.
          expect(body.messages.at(-2).content.map((block: { type: string }) => block.type)).toEqual([
            'thinking',
            'text',
            'tool_use',
          ])
          expect(body.messages.at(-2).content[0].signature).toMatch(/^sig-\d+-/)
          expect(body.messages.at(-2).content[2].input).toEqual({
            path: expect.stringMatching(/^src\/file-\d+\.ts$/),
            limit: 200,
          })
        }
      }
      previous = { exchange, index }
    }
    // A background summary that arrived after the last request is swapped in while the agent is idle: no request shows it.
    expect(pending).toBeLessThanOrEqual(1)
    expect(rewrites + pending).toBe(summaries.length)

    // C2 + C3 on the wire.
    for (const summary of summaries) {
      const index = exchanges.indexOf(summary)
      const routed = conversationBefore(exchanges, index)
      for (const key of ENVELOPE_KEYS)
        expect(JSON.stringify(summary.request.body[key]), key).toBe(JSON.stringify(routed.request.body[key]))
      // The engine's 2000-token summary budget on top of the effort's 1024-token thinking budget,
      // cut to what the 8000-token window leaves after the prompt.
      expect(summary.request.body.thinking).toEqual({ type: 'enabled', budget_tokens: 1024 })
      expect(summary.request.body.max_tokens).toBeLessThanOrEqual(2000 + 1024)
      expect(summary.request.body.max_tokens).toBeGreaterThan(1024 + 256)
      expect(routed.request.body.max_tokens).toBe(1500)
      const replay = strippedMessages(summary.request.body)
      const conversation = strippedMessages(routed.request.body)
      const last = replay.length - 1
      // The last answered request whole (it fits the summary budget) or its head; a background
      // fold's call may be sent after the next conversation request, which extends it.
      expect(last).toBeLessThanOrEqual(conversation.length - 1)
      replay
        .slice(0, last)
        .forEach((message, position) => expect(message, `summary message ${position}`).toBe(conversation[position]))
      // The region ends with a tool result, so the instruction (a user message) merges into that
      // user turn: the turn is replayed block for block, and the instruction is its last block.
      const trailing = summary.request.body.messages[last]
      expect(trailing.role).toBe('user')
      expect(trailing.content.at(-1)).toEqual({ type: 'text', text: COMPACTION_INSTRUCTION })
      expect(JSON.stringify(stripCacheControl({ ...trailing, content: trailing.content.slice(0, -1) }))).toBe(
        conversation[last],
      )
      expect(trailing.content[0].type).toBe('tool_result')
      // The last breakpoint ends the replayed region (the block before the instruction), and the
      // prompt up to it is the conversation request's: that prefix is read, nothing is written.
      expectPolicy(summary.request.body, blockCount(summary.request.body) - 1)
      const through = markedBlocks(summary.request.body).at(-1)! + 1
      expect(promptThrough(summary.request.body, through)).toBe(promptThrough(routed.request.body, through))
      expect(summary.usage.cache_read_input_tokens).toBeGreaterThan(0)
      expect(summary.usage.cache_creation_input_tokens).toBe(0)
      expect(summary.usage.input_tokens).toBe(instructionTokens)
    }

    // Usage, as parsed by the adapter and logged by the loop and the engine.
    const conversationUsage = events.flatMap((event) =>
      event.type === 'assistant/message' ? [(event.data as { usage: unknown }).usage] : [],
    )
    const expected = exchanges
      .filter((exchange) => !isSummary(exchange))
      .map(({ usage }) => ({
        inputTokens: usage.input_tokens,
        cacheReadTokens: usage.cache_read_input_tokens,
        cacheWriteTokens: usage.cache_creation_input_tokens,
        outputTokens: expect.any(Number),
        raw: expect.objectContaining({ cache_creation: usage.cache_creation }),
      }))
    expect(conversationUsage).toEqual(expected.map((usage) => expect.objectContaining(usage)))
    const summaryUsage = events.flatMap((event) =>
      event.type === 'compaction/summary' ? [(event.data as { usage: unknown }).usage] : [],
    )
    expect(summaryUsage).toEqual(
      summaries.map(({ usage }) =>
        expect.objectContaining({
          cacheReadTokens: usage.cache_read_input_tokens,
          cacheWriteTokens: usage.cache_creation_input_tokens,
          outputTokens: 90,
        }),
      ),
    )
    loop.assertClean()
  })

  it('sends a region that ends with an assistant turn as the last request, that turn, and the instruction as a separate user turn', async () => {
    // Folds on the turn's path only: a background summary that arrived after the last request
    // would be swapped in while idle, and the manual fold below would replay that new surface.
    const loop = await harness({ engine: { maxTokens: 2000, background: { enabled: false } } })
    const agent = await loop.run()
    const before = loop.exchanges().length
    // The whole surface, which ends with the final answer (compactNow would keep that newest unit).
    await loop.ctx.compaction.compactRegion(0, agent.session.surface.nodes.length - 1, agent)
    const exchanges = loop.exchanges()
    expect(exchanges).toHaveLength(before + 1)
    const summary = exchanges.at(-1)!
    expect(isSummary(summary)).toBe(true)
    const routed = conversationBefore(exchanges, exchanges.length - 1)
    const replay = strippedMessages(summary.request.body)
    const conversation = strippedMessages(routed.request.body)
    // The last request's messages, the final answer (never sent before), then the instruction alone.
    expect(replay.slice(0, conversation.length)).toEqual(conversation)
    expect(JSON.parse(replay.at(-2)!)).toMatchObject({
      role: 'assistant',
      content: [{ type: 'thinking' }, { type: 'text', text: 'All done.' }],
    })
    expect(summary.request.body.messages.at(-1)).toEqual({
      role: 'user',
      content: [{ type: 'text', text: COMPACTION_INSTRUCTION }],
    })
    expect(replay).toHaveLength(conversation.length + 2)
    // The last breakpoint is on the final answer's text, the end of the region.
    expectPolicy(summary.request.body, blockCount(summary.request.body) - 1)
    expect(summary.request.body.messages.at(-2).content.at(-1)).toEqual({
      type: 'text',
      text: 'All done.',
      cache_control: ephemeral,
    })
    // The last request's prefix is read, the final answer is written, the instruction is neither.
    expect(summary.usage.cache_read_input_tokens).toBe(promptTotal(routed))
    expect(summary.usage.cache_creation_input_tokens).toBeGreaterThan(0)
    expect(summary.usage.input_tokens).toBe(instructionTokens)
    loop.assertClean()
  })
})
