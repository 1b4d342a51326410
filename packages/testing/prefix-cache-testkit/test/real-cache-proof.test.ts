import { Context } from '@cordisjs/core'
import { COMPACTION_INSTRUCTION } from '@warmfold/compaction-basic'
import { startLlamaCacheServer } from '@warmfold/llama-cache-server'
import { OpenAICompatibleAdapter } from '@warmfold/llm-openai-compatible'
import type { SessionEvent } from '@warmfold/session'
import { describe, expect, it } from 'vitest'
import { fillerText, mountWarmfoldHost, runProbedWorkload } from '../src/index.ts'
import { shortfalls, SLACK, useLlamaCacheServer, userMessageTokens, WINDOW } from './real-cache-fixture.ts'

// The full real-cache proof, run by `pnpm test:real-cache` (vitest.real-cache.config.ts) and CI,
// not by `pnpm test`: 30-step runs (two folds) of every strategy the rules distinguish, the
// negative control and overflow recovery against a real server, about 45 s on 2 cores.
// `real-cache.test.ts` keeps a one-fold case in the default run.
const STEPS = 30

const { probe } = useLlamaCacheServer()

describe('a real KV cache (llama.cpp) confirms the cache rules', () => {
  it('conversation requests evaluate only the tokens appended since the previous request', async () => {
    const run = await runProbedWorkload({ window: WINDOW, steps: STEPS, strategy: 'warmfold' }, probe())
    expect(run.completed).toBe(true)
    expect(run.conversation.length).toBeGreaterThan(STEPS)
    expect(shortfalls(run, true)).toEqual([])
    for (const record of run.probeRecords) expect(record.uncachedTokens).toBe(record.promptTokens - record.cachedTokens)
  }, 120_000)

  it('with warmfold, every summary call evaluates no more than the instruction plus a small template slack', async () => {
    const instructionTokens = await userMessageTokens(probe(), COMPACTION_INSTRUCTION)
    const run = await runProbedWorkload({ window: WINDOW, steps: STEPS, strategy: 'warmfold', effort: 'max' }, probe())
    expect(run.summaryCalls.length).toBeGreaterThanOrEqual(1)
    for (const call of run.summaryCalls) {
      expect(call.uncachedTokens).toBeLessThanOrEqual(instructionTokens + SLACK)
      expect(call.cachedTokens).toBeGreaterThan(call.promptTokens / 2)
    }
  }, 120_000)

  it('with legacy, a summary call whose effort differs re-evaluates from token 0', async () => {
    const run = await runProbedWorkload({ window: WINDOW, steps: STEPS, strategy: 'legacy', effort: 'max' }, probe())
    expect(run.summaryCalls.length).toBeGreaterThanOrEqual(1)
    // Only BOS and the "Reasoning effort: " label precede the effort text in the template.
    for (const call of run.summaryCalls) expect(call.cachedTokens).toBeLessThanOrEqual(32)
  }, 120_000)

  it('with legacy at the default effort, the summary call re-evaluates from the first rewritten tool result', async () => {
    const run = await runProbedWorkload({ window: WINDOW, steps: STEPS, strategy: 'legacy', effort: 'high' }, probe())
    const [call] = run.summaryCalls
    expect(call).toBeDefined()
    expect(call!.divergence).toMatchObject({ part: 'message' })
    const diverging = (call!.divergence as { index: number }).index
    const summaryRequest = run.requests[call!.index]!
    const firstPrunedSeq = run.session.events.find((event) => event.type === 'compaction/prune') as
      | SessionEvent<'compaction/prune'>
      | undefined
    expect(firstPrunedSeq).toBeDefined()
    // The divergent message is a tool result the prune pass rewrote before the summary replayed it.
    expect(summaryRequest.messages[diverging]!.content[0]!.type).toBe('tool-result')
    // The real cache stops inside that tool result: after everything before it (its kept head
    // still matches, the marker does not) and before the end of it, as the same server renders it.
    const measure = probe()
    const before = await measure.probe({
      ...summaryRequest,
      messages: summaryRequest.messages.slice(0, diverging),
      purpose: 'measure',
    })
    const through = await measure.probe({
      ...summaryRequest,
      messages: summaryRequest.messages.slice(0, diverging + 1),
      purpose: 'measure',
    })
    expect(call!.cachedTokens).toBeGreaterThanOrEqual(before.promptTokens - SLACK)
    expect(call!.cachedTokens).toBeLessThan(through.promptTokens)
    expect(call!.uncachedTokens).toBeGreaterThan(1000)
  }, 120_000)

  it('negative control: a timestamp at the top of the system prompt destroys reuse, so the check above can fail', async () => {
    let clock = 0
    const run = await runProbedWorkload({ window: WINDOW, steps: 6, strategy: 'warmfold' }, probe(), {
      configure(ctx) {
        ctx.on('agent/request', (context) => {
          context.header = {
            ...context.header,
            system: `Current time: 2026-11-29T23:${String(clock++).padStart(2, '0')}:00Z\n${context.header.system ?? ''}`,
          }
        })
      },
    })
    const broken = shortfalls(run, false)
    expect(broken.length).toBe(run.conversation.length - 1)
    for (const observation of broken) expect(observation.cachedTokens).toBeLessThan(64)
  }, 120_000)
})

describe('context overflow against the real server', () => {
  it('a request larger than the context is rejected as CONTEXT_WINDOW_EXCEEDED, and overflow recovery compacts and retries', async () => {
    const small = await startLlamaCacheServer({ contextSize: 4096 })
    const turns = 24
    const ctx = new Context()
    await ctx.start()
    try {
      mountWarmfoldHost(ctx)
      // The declared window is larger than the server's context, so pressure never fires first:
      // only the server's own limit can stop a request.
      ctx.plugin(OpenAICompatibleAdapter, {
        provider: 'llama',
        baseURL: small.baseURL,
        dialect: 'llamacpp',
        models: { tiny: { contextWindow: 16000, defaultMaxTokens: 16 } },
      })
      const agent = await ctx.agentLoop.create('overflow', { provider: 'llama', model: 'tiny' })
      // Each user message is about 280 tokens of the tiny vocabulary; 4096 fill up after ~14 turns.
      for (let turn = 0; turn < turns; turn++) {
        agent.followup(fillerText(100 + turn, 400))
        await agent.whenIdle()
      }
      const events = agent.session.events
      const starts = events.filter((event) => event.type === 'compaction/start') as SessionEvent<'compaction/start'>[]
      expect(starts.length).toBeGreaterThan(0)
      expect(starts.every((event) => event.data.trigger === 'context-overflow')).toBe(true)
      expect(events.some((event) => event.type === 'compaction/summary')).toBe(true)
      const ends = events
        .filter((event) => event.type === 'turn/end')
        .map((event) => (event.data as { reason: string }).reason)
      expect(ends).toEqual(Array(turns).fill('stop'))
      expect(small.records.every((record) => record.promptTokens < 4096)).toBe(true)
    } finally {
      await ctx.stop()
      await small.close()
    }
  }, 120_000)
})
