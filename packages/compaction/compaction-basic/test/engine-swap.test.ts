import type { Context } from '@cordisjs/core'
import type { CompactionAgent, CompactionResult, CompactionTrigger } from '@warmfold/compaction'
import { CompactionEngine } from '@warmfold/compaction'
import { textBlock, toolCallBlock } from '@warmfold/llm'
import { afterEach, describe, expect, it } from 'vitest'
import type { EngineHarness } from './engine-fixture.ts'
import { filler, mountEngine, runAgent, WINDOW } from './engine-fixture.ts'

/** An engine that implements only the contract: it records what triggers it and compacts nothing. */
class RecordingEngine extends CompactionEngine {
  readonly calls: CompactionTrigger[] = []
  constructor(ctx: Context, config: unknown) {
    super(ctx, config)
  }
  async compactIfNeeded(_agent: CompactionAgent, trigger: CompactionTrigger): Promise<CompactionResult | null> {
    this.calls.push(trigger)
    return null
  }
  async compactNow(): Promise<CompactionResult | null> {
    return null
  }
  async compactRegion(): Promise<CompactionResult> {
    throw new Error('RecordingEngine compacts no region')
  }
}

const harnesses: EngineHarness[] = []
afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.dispose()
})

/** Tool steps `0..29`, an answer, tool steps `31..50`, an answer: two turns that each grow the prompt past the threshold. */
function twoLongTurns(_request: unknown, index: number) {
  if (index === 30 || index === 51) return { content: 'All done.' }
  return {
    content: [
      textBlock(`Step ${index}: reading. ${filler(index, 80)}`),
      toolCallBlock(`call-${index}`, 'read', `{"path":"src/file-${index}.ts"}`),
    ],
  }
}

describe('swapping the engine at runtime', () => {
  it('unloading the basic engine removes its triggers, and a contract-only engine mounted instead is triggered', async () => {
    const harness = await mountEngine({ conversation: twoLongTurns })
    harnesses.push(harness)
    const agent = await runAgent(harness)
    const summaries = harness.summaries().length
    expect(summaries).toBeGreaterThan(0)

    harness.engineScope.dispose()
    expect(harness.ctx.get('compaction')).toBeUndefined()
    harness.ctx.plugin(RecordingEngine)
    const engine = harness.ctx.get('compaction') as RecordingEngine
    const swappedAt = agent.session.length
    const sent = harness.conversation().length
    agent.followup('Keep going.')
    await agent.whenIdle()

    // The second turn grew past the threshold (0.8 of the window) again, yet the unloaded engine
    // made no call and logged nothing.
    expect(harness.ctx.tokenMeter.measure(agent.session).totalTokens).toBeGreaterThan(0.8 * WINDOW)
    expect(harness.summaries()).toHaveLength(summaries)
    expect(agent.session.events.slice(swappedAt).filter((event) => event.type.startsWith('compaction/'))).toEqual([])
    // The new engine ran before every request of the turn.
    const requests = harness.conversation().length - sent
    expect(requests).toBe(21)
    expect(engine.calls).toEqual(Array(requests).fill('pressure'))
    expect(agent.session.events.at(-1)?.data).toMatchObject({ reason: 'stop' })
    harness.assertClean()
  })
})
