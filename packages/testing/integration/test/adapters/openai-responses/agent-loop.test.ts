import { COMPACTION_INSTRUCTION } from '@warmfold/compaction-basic'
import { afterEach, describe, expect, it } from 'vitest'
import { promptCacheKeyFor } from '@warmfold/llm'
import type { Exchange, LoopHarness } from './loop-fixture.ts'
import { ENVELOPE_KEYS, isCompaction, mountLoop } from './loop-fixture.ts'

const harnesses: LoopHarness[] = []
afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.dispose()
})

const isSummary = (exchange: Exchange) => exchange.call.purpose === 'compaction'
const items = (exchange: Exchange): string[] => exchange.request.json.input.map((item: unknown) => JSON.stringify(item))
const instruction = JSON.stringify({
  type: 'message',
  role: 'user',
  content: [{ type: 'input_text', text: COMPACTION_INSTRUCTION }],
})

// A whole session over HTTP: a few seconds alone, more on a loaded machine, so not the default 5 s.
describe('through the real agent loop and BasicCompactionEngine', { timeout: 30_000 }, () => {
  it('keeps conversation requests append-only, and each summary request the previous request’s items plus only the instruction, reasoning replayed', async () => {
    const loop = await mountLoop()
    harnesses.push(loop)
    const agent = await loop.run()
    const exchanges = loop.exchanges()
    const summaries = exchanges.filter(isSummary)
    expect(summaries.length).toBeGreaterThan(0)
    expect(summaries.every((summary) => isCompaction(summary.request.json))).toBe(true)

    let previous: Exchange | undefined
    let folds = 0
    let pending = 0
    for (const [index, exchange] of exchanges.entries()) {
      const body = exchange.request.json
      expect(body).toMatchObject({
        store: false,
        include: ['reasoning.encrypted_content'],
        stream: true,
        prompt_cache_key: promptCacheKeyFor('session'),
        prompt_cache_retention: 'in_memory',
      })
      expect(body).not.toHaveProperty('previous_response_id')
      expect(exchange.request.body).not.toMatch(/"id":"(rs|msg|fc)_/)
      if (isSummary(exchange)) {
        // C2 + C3 on the wire: the same envelope, the routed request's items, then the instruction alone.
        const routed = exchanges.slice(0, index).findLast((candidate) => !isSummary(candidate))!
        for (const key of ENVELOPE_KEYS)
          expect(JSON.stringify(body[key]), key).toBe(JSON.stringify(routed.request.json[key]))
        expect(body.max_output_tokens).toBe(2000)
        const replay = items(exchange)
        const conversation = items(routed)
        expect(replay.at(-1)).toBe(instruction)
        replay
          .slice(0, -1)
          .forEach((item, position) => expect(item, `summary item ${position}`).toBe(conversation[position]))
        // The replayed region carries its reasoning items, in place, encrypted content included.
        const reasoning = exchange.request.json.input.filter((item: { type: string }) => item.type === 'reasoning')
        expect(reasoning.length).toBeGreaterThan(0)
        expect(reasoning[0]).toEqual({
          type: 'reasoning',
          summary: [{ type: 'summary_text', text: expect.stringMatching(/^Step \d+: the next file/) }],
          encrypted_content: expect.stringMatching(/^enc-\d+-/),
        })
        // Everything but the instruction is a cache read.
        expect(exchange.usage.input_tokens - exchange.usage.input_tokens_details.cached_tokens).toBe(
          Math.ceil(instruction.length / 4),
        )
        pending++
        continue
      }
      expect(body.max_output_tokens).toBe(1500)
      if (previous) {
        for (const key of ENVELOPE_KEYS)
          expect(JSON.stringify(body[key]), key).toBe(JSON.stringify(previous.request.json[key]))
        const before = items(previous)
        const after = items(exchange)
        // A background fold swaps its checkpoint in at a later boundary than its summary call.
        if (!before.every((item, position) => after[position] === item)) {
          expect(pending, `request ${index} rewrote history without a summary to swap in`).toBeGreaterThan(0)
          pending--
          folds += 1
          expect(after[0]).toContain('<compacted-summary>')
        } else {
          expect(after.slice(0, before.length)).toEqual(before)
          // The previous step's reasoning, message and function call, then its function_call_output.
          expect(after.slice(before.length).map((item) => JSON.parse(item).type)).toEqual([
            'reasoning',
            'message',
            'function_call',
            'function_call_output',
          ])
          expect(exchange.usage.input_tokens_details.cached_tokens).toBe(previous.usage.input_tokens)
        }
      }
      previous = exchange
    }
    // A background summary that arrived after the last request is swapped in while the agent is idle: no request shows it.
    expect(pending).toBeLessThanOrEqual(1)
    expect(folds + pending).toBe(summaries.length)

    // Usage as the loop logged it: uncached input is the total minus the cached part.
    const logged = agent.session.events.flatMap((event) =>
      event.type === 'assistant/message' ? [(event.data as { usage: any }).usage] : [],
    )
    const expected = exchanges
      .filter((exchange) => !isSummary(exchange))
      .map(({ usage }) =>
        expect.objectContaining({
          inputTokens: usage.input_tokens - usage.input_tokens_details.cached_tokens,
          cacheReadTokens: usage.input_tokens_details.cached_tokens,
          outputTokens: 60,
          reasoningTokens: 25,
        }),
      )
    expect(logged).toEqual(expected)
  })
})
