import type { Message } from '@warmfold/llm'
import {
  createAssistantMessage,
  createToolResultMessage,
  createUserMessage,
  reasoningBlock,
  textBlock,
  toolCallBlock,
} from '@warmfold/llm'
import { afterEach, describe, expect, it } from 'vitest'
import { LOOKBACK_BLOCKS, MAX_BREAKPOINTS } from '../src/place-breakpoints.ts'
import type { AdapterHarness } from './adapter-fixture.ts'
import { breakpointCount, mountAdapter } from './adapter-fixture.ts'
import type { SimulatedUsage } from './prompt-cache-simulator.ts'
import { PromptCacheSimulator } from './prompt-cache-simulator.ts'
import { streamReply } from './sse-script.ts'

const origin = { provider: 'anthropic', model: 'claude-test' }
const tools = [{ name: 'read', description: 'Read a file', parameters: { type: 'object' } }]

const harnesses: AdapterHarness[] = []
afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.dispose()
})

/** A server whose usage comes from the prompt-cache model, and the usage of every request. */
async function simulatedServer(
  config: Record<string, unknown> = {},
): Promise<{ adapter: AdapterHarness; usages: SimulatedUsage[] }> {
  const cache = new PromptCacheSimulator()
  const usages: SimulatedUsage[] = []
  const adapter = await mountAdapter((request) => {
    const usage = cache.usageFor(request.body)
    usages.push(usage)
    return streamReply({ blocks: [{ type: 'text', text: 'ok' }], startUsage: { ...usage, output_tokens: 1 } })
  }, config)
  harnesses.push(adapter)
  return { adapter, usages }
}

const total = (usage: SimulatedUsage) =>
  usage.cache_read_input_tokens + usage.cache_creation_input_tokens + usage.input_tokens
const block = (text: string) => ({ type: 'text', text })

/** `count` wire blocks (assistant turns of thinking + text + tool call, then their results) appended in one step. */
function longStep(count: number, from: number): Message[] {
  const messages: Message[] = []
  let blocks = 0
  for (let index = from; blocks < count; index++) {
    const id = `toolu_${index}`
    messages.push(
      createAssistantMessage(
        [
          reasoningBlock(`think ${index}`, `sig-${index}`),
          textBlock(`step ${index}`),
          toolCallBlock(id, 'read', `{"path":"f${index}"}`),
        ],
        origin,
      ),
    )
    messages.push(createToolResultMessage(id, `contents of f${index} `.repeat(4)))
    blocks += 4
  }
  return messages
}

describe('a step that appends many blocks', () => {
  it.each([30, 50])('still reads the previous request prefix after %i appended blocks', async (appended) => {
    const { adapter, usages } = await simulatedServer()
    const first: Message[] = [createUserMessage('Read every file.'), ...longStep(8, 0)]
    const second = [...first, ...longStep(appended, 100)]
    await adapter.collect({ system: 'You are careful.', tools, messages: first })
    await adapter.collect({ system: 'You are careful.', tools, messages: second })
    const [, next] = usages
    // The whole first prompt is read back; only the appended blocks are written.
    expect(next!.cache_read_input_tokens).toBe(total(usages[0]!))
    expect(next!.cache_creation_input_tokens).toBeGreaterThan(0)
    const raw = adapter.server.requests[1]!.rawBody
    expect(breakpointCount(raw)).toBeLessThanOrEqual(MAX_BREAKPOINTS)
    expect(breakpointCount(raw)).toBeGreaterThan(2)
    adapter.assertClean()
  })

  it('needs the extra breakpoints: the simulated lookback reaches 19 blocks back from a breakpoint, not 20', () => {
    const request = (count: number, marked: number[]) => ({
      model: 'm',
      system: [{ ...block('sys'), cache_control: { type: 'ephemeral' } }],
      messages: [
        {
          role: 'user',
          content: Array.from({ length: count }, (_, index) =>
            marked.includes(index)
              ? { ...block(`b${index}`), cache_control: { type: 'ephemeral' } }
              : block(`b${index}`),
          ),
        },
      ],
    })
    const systemTokens = Math.ceil(JSON.stringify(block('sys')).length / 4)
    const readAfter = (count: number, marked: number[]) => {
      const cache = new PromptCacheSimulator()
      cache.usageFor(request(10, [9]))
      return cache.usageFor(request(count, marked)).cache_read_input_tokens
    }
    // 19 blocks appended: the last breakpoint's window (itself and the 19 before) holds the write at 9.
    expect(readAfter(29, [28])).toBeGreaterThan(systemTokens)
    // 20 appended: out of the window, only the system prompt is read (the old two-breakpoint policy).
    expect(readAfter(30, [29])).toBe(systemTokens)
    // A second breakpoint one stride back brings the earlier blocks back.
    expect(readAfter(30, [29 - LOOKBACK_BLOCKS, 29])).toBe(readAfter(29, [28]))
  })
})
