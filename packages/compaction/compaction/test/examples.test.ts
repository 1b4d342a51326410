import { AgentLoop, MissingServiceError, ToolRegistry } from '@warmfold/agent-loop'
import { LlmRuntime, textOf } from '@warmfold/llm'
import { ScriptedAdapter } from '@warmfold/llm/testing'
import { SessionStore } from '@warmfold/session'
import { createTestContext, recordCordisPrints } from '@warmfold/test-utils'
import { describe, expect, it } from 'vitest'
import { MyEngine } from '../examples/my-engine.ts'
import { main as usage } from '../examples/usage.ts'
import { checkpointCompactionId, CompactionInvariants, isCheckpointMessage } from '../src/index.ts'

// The README shows these files verbatim (checked by test-utils' readme-examples test). The
// engine example runs under CompactionInvariants, so a transaction that broke the contract fails here.
describe('README examples run', () => {
  it('usage + my-engine: a contract-only engine compacts an idle agent through ctx.compaction with a warm summary call', async () => {
    const { result, printed } = await recordCordisPrints(usage)
    expect(printed).toEqual([])
    const compaction = result.result
    expect(compaction).not.toBeNull()
    expect(compaction).toMatchObject({
      shadowedRange: { start: 0, end: 2 },
      startSeq: expect.any(Number),
      endSeq: expect.any(Number),
    })
    expect(compaction!.shadowedSeqs).toHaveLength(3)
    expect(textOf(compaction!.summary)).toBe('Goal: fix add. Done: add now adds; tests pass.')

    expect(result.messages).toHaveLength(2)
    expect(isCheckpointMessage(result.messages[0]!)).toBe(true)
    expect(checkpointCompactionId(result.messages[0]!)).toBe(compaction!.compactionId)
    expect(textOf(result.messages[1]!.content)).toBe('Yes, all 12 tests pass.')

    // C2/C3: the summary call carries the conversation's effort, replays the region, adds one instruction.
    expect(result.summaryRequest).toMatchObject({ purpose: 'compaction', reasoningEffort: 'max', maxTokens: 4096 })
    expect(result.summaryRequest!.messages).toHaveLength(4)
  })

  it('my-engine: the contract base triggers it before each step, it compacts only above its threshold, and checks compactRegion edges', async () => {
    const test = await createTestContext()
    try {
      const { ctx } = test
      ctx.plugin(LlmRuntime)
      ctx.plugin(SessionStore, { store: 'memory' })
      ctx.plugin(ToolRegistry)
      ctx.plugin(AgentLoop)
      ctx.plugin(CompactionInvariants)
      ctx.plugin(MyEngine, { maxCharacters: 200, summaryMaxTokens: 512 })
      ctx.llm.registerAdapter(
        'p',
        new ScriptedAdapter({
          responses: (request) => ({ content: request.purpose === 'compaction' ? 'summary' : 'x'.repeat(60) }),
        }),
      )
      const agent = await ctx.agentLoop.create('pressure', { provider: 'p', model: 'scripted-model' })
      const starts = () => agent.session.events.filter((event) => event.type === 'compaction/start')
      agent.followup('one')
      await agent.whenIdle()
      expect(starts()).toEqual([]) // below 200 characters: triggered, but nothing to do
      agent.followup('two')
      agent.followup('three')
      await agent.whenIdle()
      // Nobody called ctx.compaction: the CompactionEngine base triggered it before a step.
      expect(starts().length).toBeGreaterThan(0)
      expect(starts()[0]).toMatchObject({ data: { trigger: 'pressure', turn: expect.any(Number) } })
      expect(agent.session.events.some((event) => event.type === 'compaction/summary')).toBe(true)
      expect(isCheckpointMessage(agent.session.deriveMessages()[0]!)).toBe(true)
      expect(agent.session.events.at(-1)).toMatchObject({ type: 'turn/end', data: { reason: 'stop' } })
      await expect(ctx.compaction.compactRegion(1, 0, agent)).rejects.toThrow('region 1..0 is not on the surface')
      test.assertClean()
    } finally {
      await test.dispose()
    }
  })

  it('my-engine: declares no required inject, so without the LLM runtime it is still mounted and says what to mount', async () => {
    const test = await createTestContext()
    try {
      const { ctx } = test
      ctx.plugin(SessionStore, { store: 'memory' })
      ctx.plugin(ToolRegistry)
      ctx.plugin(AgentLoop)
      ctx.plugin(MyEngine, { maxCharacters: 200, summaryMaxTokens: 512, auto: false })
      // A required inject would keep the engine pending without a word: no ctx.compaction at all.
      expect(ctx.get('compaction')).toBeDefined()
      const agent = {
        session: await ctx.sessions.create('no-llm'),
        options: { provider: 'p', model: 'm' },
        runMaintenance: () => Promise.reject(new Error('not reached')),
      }
      const refused = await ctx.compaction.compactNow(agent as never).catch((error: unknown) => error)
      expect(MissingServiceError.isInstance(refused)).toBe(true)
      expect((refused as Error).message).toBe(
        'MyEngine needs ctx.llm, which is not mounted in its Context: mount @warmfold/llm (ctx.plugin(LlmRuntime)) in the same Context',
      )
      test.assertClean()
    } finally {
      await test.dispose()
    }
  })
})
