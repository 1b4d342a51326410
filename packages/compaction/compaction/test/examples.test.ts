import { AgentLoop, ToolRegistry } from '@warmfold/agent-loop'
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
    expect(compaction).toMatchObject({ shadowedRange: { start: 0, end: 2 }, startSeq: expect.any(Number), endSeq: expect.any(Number) })
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

  it('my-engine: compacts under pressure only above its threshold, logs the trigger, and checks compactRegion edges', async () => {
    const test = await createTestContext()
    try {
      const { ctx } = test
      ctx.plugin(LlmRuntime)
      ctx.plugin(SessionStore, { store: 'memory' })
      ctx.plugin(ToolRegistry)
      ctx.plugin(AgentLoop)
      ctx.plugin(CompactionInvariants)
      ctx.plugin(MyEngine, { maxCharacters: 200, summaryMaxTokens: 512 })
      ctx.llm.registerAdapter('p', new ScriptedAdapter({ responses: (request) => ({ content: request.purpose === 'compaction' ? 'summary' : 'x'.repeat(60) }) }))
      const agent = await ctx.agentLoop.create('pressure', { provider: 'p', model: 'scripted-model' })
      agent.followup('one')
      await agent.whenIdle()
      expect(await ctx.compaction.compactIfNeeded(agent, 'pressure')).toBeNull() // below 200 characters
      agent.followup('two')
      agent.followup('three')
      await agent.whenIdle()
      await expect(ctx.compaction.compactRegion(1, 0, agent)).rejects.toThrow('region 1..0 is not on the surface')
      const result = await ctx.compaction.compactIfNeeded(agent, 'pressure')
      expect(result?.shadowedRange).toEqual({ start: 0, end: 4 })
      const start = agent.session.eventAt(result!.startSeq)
      expect(start).toMatchObject({ type: 'compaction/start', data: { trigger: 'pressure', turn: null } })
      expect(agent.session.eventAt(result!.endSeq)).toMatchObject({ type: 'compaction/end', data: { compactionId: result!.compactionId } })
      expect(agent.session.deriveMessages()).toHaveLength(2)
      test.assertClean()
    } finally {
      await test.dispose()
    }
  })
})
