import { canonicalJson, promptView, textOf } from '@warmfold/llm'
import type { SessionEvent } from '@warmfold/session'
import { afterEach, describe, expect, it } from 'vitest'
import { COMPACTION_INSTRUCTION } from '../src/index.ts'
import { frameCheckpoint } from '../src/engine-parts.ts'
import { INSTRUCTION_SOURCE_PLUGIN } from '../src/fold/summary-request.ts'
import type { EngineHarness } from './engine-fixture.ts'
import { conversationBefore, elements, mountEngine, ROUTE, runAgent, stopAfter, SUMMARY } from './engine-fixture.ts'

const harnesses: EngineHarness[] = []
afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.dispose()
})

async function harness(options: Parameters<typeof mountEngine>[0] = {}): Promise<EngineHarness> {
  const created = await mountEngine(options)
  harnesses.push(created)
  return created
}

const warm = { reasoningEffort: 'max', temperature: 0.3, stop: ['<halt>'] }

describe('the summary call replays the conversation (C2, C3)', () => {
  it('carries the routed effort, temperature and stop, the same system and tools, and the policy cap', async () => {
    const engine = await harness({ engine: { maxTokens: 700 }, conversation: stopAfter(30) })
    await runAgent(engine, warm)
    const summaries = engine.summaries()
    expect(summaries.length).toBeGreaterThanOrEqual(1)
    for (const summary of summaries) {
      const before = conversationBefore(engine, summary)
      expect(summary).toMatchObject({
        provider: 'scripted',
        model: 'main',
        reasoningEffort: 'max',
        temperature: 0.3,
        stop: ['<halt>'],
        maxTokens: 700,
      })
      expect(before.maxTokens).toBe(500)
      expect(canonicalJson(summary.system)).toBe(canonicalJson(before.system))
      expect(canonicalJson(summary.tools)).toBe(canonicalJson(before.tools))
    }
    engine.assertClean()
  })

  it('replays the routed messages byte for byte and adds exactly one instruction message', async () => {
    const engine = await harness({ conversation: stopAfter(30) })
    const agent = await runAgent(engine, warm)
    const summaries = engine.summaries()
    expect(summaries.length).toBeGreaterThanOrEqual(1)
    for (const summary of summaries) {
      const replay = elements(summary).slice(0, -1)
      const conversation = elements(conversationBefore(engine, summary))
      // A background summary replays an answered request; the loop may have sent the next one
      // before the summary streamed (a longer request), or not yet (the same request).
      expect(replay.length).toBeLessThanOrEqual(conversation.length)
      replay.forEach((element, index) => expect(element, `prompt element ${index}`).toBe(conversation[index]))
      const instruction = summary.messages.at(-1)!
      expect(instruction.role).toBe('user')
      expect(instruction.content).toEqual([{ type: 'text', text: COMPACTION_INSTRUCTION }])
    }
    const summaryEvents = agent.session.events.filter((event) => event.type === 'compaction/summary')
    expect(summaryEvents).toHaveLength(summaries.length)
    expect(summaryEvents[0]!.data).toMatchObject({
      provider: 'scripted',
      model: 'main',
      reasoningEffort: 'max',
      temperature: 0.3,
      stop: ['<halt>'],
      maxTokens: summaries[0]!.maxTokens,
    })
    // The 8192 default cap is cut to what the 8000-token window leaves after the prompt.
    expect(summaries[0]!.maxTokens).toBeLessThan(8000)
    engine.assertClean()
  })

  it('replays the whole region: every shadowed message byte for byte, then exactly one instruction', async () => {
    // A prefix of the routed messages alone is not enough: a replay that dropped or rewrote
    // region messages would still be a prefix, and the checkpoint would shadow what the
    // summarizer never saw. Long enough for a second summary, whose region starts with the first checkpoint.
    const engine = await harness({ conversation: stopAfter(60) })
    const agent = await runAgent(engine, warm)
    const summaries = engine.summaries()
    const events = agent.session.events.filter(
      (event) => event.type === 'compaction/summary',
    ) as SessionEvent<'compaction/summary'>[]
    expect(summaries.length).toBeGreaterThanOrEqual(2)
    expect(events).toHaveLength(summaries.length)
    summaries.forEach((summary, k) => {
      const { shadowedRange, shadowedSeqs } = events[k]!.data
      const regionSize = shadowedRange.end - shadowedRange.start + 1
      expect(shadowedRange.start).toBe(0)
      expect(shadowedSeqs).toHaveLength(regionSize)
      expect(summary.messages, `summary ${k}: the region's ${regionSize} messages and the instruction`).toHaveLength(
        regionSize + 1,
      )
      const routed = conversationBefore(engine, summary).messages.map((message) => canonicalJson(promptView(message)))
      // A background fold's region can be the whole request it replays: the messages sent after
      // it are the tail the swap keeps.
      expect(routed.length).toBeGreaterThanOrEqual(regionSize)
      summary.messages
        .slice(0, regionSize)
        .forEach((message, index) =>
          expect(canonicalJson(promptView(message)), `summary ${k}, region message ${index}`).toBe(routed[index]),
        )
      const instructions = summary.messages.filter((message) =>
        textOf(message.content).includes(COMPACTION_INSTRUCTION),
      )
      expect(instructions).toEqual([summary.messages.at(-1)])
      expect(summary.messages.at(-1)!.source).toEqual({ kind: 'plugin', plugin: INSTRUCTION_SOURCE_PLUGIN })
    })
    engine.assertClean()
  })

  it('commits a framed checkpoint right after its summary, and the next request reuses the static head', async () => {
    const engine = await harness({ conversation: stopAfter(30) })
    const agent = await runAgent(engine, warm)
    const events = agent.session.events
    const summary = events.find((event) => event.type === 'compaction/summary')!
    const checkpoint = events[summary.seq + 1]!
    expect(checkpoint.type).toBe('user/message')
    expect(checkpoint.surface).toMatchObject({ op: 'replace', start: 0 })
    expect(JSON.stringify(checkpoint.data)).toContain(JSON.stringify(frameCheckpoint(SUMMARY)).slice(1, -1))
    // The audit closes the fold's unit, then the bracket ends.
    expect(events[summary.seq + 2]).toMatchObject({
      type: 'compaction/audit',
      data: { compactionId: (summary.data as { compactionId: string }).compactionId },
    })
    expect(events[summary.seq + 3]).toMatchObject({
      type: 'compaction/end',
      data: { compactionId: (summary.data as { compactionId: string }).compactionId },
    })
    const after = engine.requests[engine.requests.indexOf(engine.summaries()[0]!) + 1]!
    expect(after.purpose).toBe('conversation')
    expect(elements(after).slice(0, 2)).toEqual(elements(engine.summaries()[0]!).slice(0, 2))
    expect(agent.session.deriveMessages()[0]!.content[0]).toMatchObject({
      type: 'text',
      text: frameCheckpoint(SUMMARY),
    })
    engine.assertClean()
  })

  it('inherits nothing when a summarization route is configured', async () => {
    const engine = await harness({
      engine: { summarizationProvider: 'scripted', summarizationModel: 'other' },
      conversation: stopAfter(30),
    })
    await runAgent(engine, warm)
    const summaries = engine.summaries()
    expect(summaries.length).toBeGreaterThanOrEqual(1)
    for (const summary of summaries) {
      // The runtime materializes the *target* model's default effort; nothing comes from the conversation.
      expect(summary).toMatchObject({ model: 'other', reasoningEffort: 'low', maxTokens: 8192 })
      expect(summary.temperature).toBeUndefined()
      expect(summary.stop).toBeUndefined()
    }
    engine.assertClean()
  })

  it('inherits nothing when the routed header names another model than the summary target (a stale header from a resumed session)', async () => {
    const engine = await harness({
      engine: { summarizationProvider: 'scripted', summarizationModel: 'main' },
      conversation: stopAfter(12),
    })
    await runAgent(engine, { ...warm, reasoningEffort: 'low', model: 'other' })
    // The session's header is for `other`; its window (32000) is never pressured by 12 steps.
    // Resume the same session on `main` with effort max: the first pre-step still sees the `other` header.
    const session = await engine.ctx.sessions.open('session')
    const main = await engine.ctx.agentLoop.create('session', { ...ROUTE, system: 'You are a coding agent.', ...warm })
    expect(main.session).toBe(session)
    await engine.ctx.compaction.compactNow(main)
    const summary = engine.summaries().at(-1)!
    expect(summary.model).toBe('main')
    expect(summary.reasoningEffort).toBe('high')
    expect(summary.temperature).toBeUndefined()
    expect(summary.stop).toBeUndefined()
    engine.assertClean()
  })

  it('summarizes only the head that fits the summary target window, and caps the output to what is left', async () => {
    const engine = await harness({
      engine: { summarizationProvider: 'scripted', summarizationModel: 'main' },
      conversation: stopAfter(30),
    })
    const agent = await runAgent(engine, { ...warm, reasoningEffort: 'low', model: 'other' })
    // About 11k tokens of history on the 32k model; the summary target has an 8000-token window.
    expect(engine.ctx.tokenMeter.measure(agent.session).surfaceTokens).toBeGreaterThan(8000)
    const result = await engine.ctx.compaction.compactNow(agent)
    expect(result).not.toBeNull()
    const [summary] = engine.summaries()
    const meter = engine.ctx.tokenMeter
    const prompt =
      meter.estimateSystem(summary!.system) +
      meter.estimateTools(summary!.tools) +
      summary!.messages.reduce((sum, message) => sum + meter.estimateMessage(message), 0)
    expect(prompt + summary!.maxTokens!).toBeLessThanOrEqual(8000)
    expect(summary!.maxTokens).toBeGreaterThanOrEqual(256)
    expect(result!.shadowedRange.end).toBeLessThan(agent.session.surface.nodes.length + result!.shadowedSeqs.length - 2)
    engine.assertClean()
  })
})
