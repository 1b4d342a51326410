import type { CompactionAfterContext } from '@warmfold/compaction'
import { COMPACTION_AFTER_PLUGIN, compactionAfterId, isCheckpointMessage } from '@warmfold/compaction'
import { imageBlock, textBlock, textOf } from '@warmfold/llm'
import type { SessionEvent } from '@warmfold/session'
import { afterEach, describe, expect, it } from 'vitest'
import type { EngineHarness, EngineHarnessOptions } from './engine-fixture.ts'
import { mountEngine, ROUTE } from './engine-fixture.ts'
import { bytesOf, folds, foldThreeTimes, loggedMessage, requestAfter, requestsOf } from './fold-survival-fixture.ts'

const harnesses: EngineHarness[] = []
afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.dispose()
})

async function harness(options: EngineHarnessOptions): Promise<EngineHarness> {
  const created = await mountEngine(options)
  harnesses.push(created)
  return created
}

const REREAD = 'Instruction files, re-read after the fold: AGENTS.md says run `pnpm test` before committing.'

describe('the compaction/after hook', () => {
  it('appends its content in the checkpoint commit, and the next request carries it', async () => {
    const script = requestsOf(8)
    const engine = await harness({
      engine: { keepUserMessages: { maxTokens: 2000 } },
      conversation: (request, index) => script.reply(request, index),
    })
    const seen: Omit<CompactionAfterContext, 'append' | 'session' | 'signal'>[] = []
    engine.ctx.on('compaction/after', async (context) => {
      seen.push({
        compactionId: context.compactionId,
        trigger: context.trigger,
        summary: context.summary,
        carriedSeqs: context.carriedSeqs,
      })
      // A listener may do async work first (re-read files); the commit waits for it.
      await new Promise((resolve) => setImmediate(resolve))
      context.append(REREAD)
    })
    engine.ctx.on('compaction/after', (context) =>
      context.append([textBlock('The plan, as an image:'), imageBlock('image/png', 'iVBORw0KGgo=')]),
    )
    const { session, sent } = await foldThreeTimes(engine, script, 'after', 2)
    const commits = folds(session)
    expect(seen).toHaveLength(commits.length)
    expect(seen[0]).toMatchObject({ trigger: 'background' })
    for (const [index, commit] of commits.entries()) {
      const { compactionId } = commit.data
      // Background folds here, until the engine's forecast sends one to the turn's path (its pace on the real clock).
      const start = session.events.find(
        (event) => event.type === 'compaction/start' && event.data.compactionId === compactionId,
      ) as SessionEvent<'compaction/start'>
      expect(seen[index]).toMatchObject({
        compactionId,
        trigger: start.data.trigger,
        carriedSeqs: commit.data.carriedSeqs,
      })
      // summary, checkpoint, then both listeners' messages in listener order, the audit, then the end.
      const [checkpoint, first, second, audit, end] = session.events.slice(commit.seq + 1, commit.seq + 6)
      expect(audit).toMatchObject({ type: 'compaction/audit', data: { compactionId } })
      expect(isCheckpointMessage(loggedMessage(session, checkpoint!.seq))).toBe(true)
      for (const event of [first!, second!]) {
        expect(event).toMatchObject({ type: 'user/message', surface: { op: 'append' } })
        const message = loggedMessage(session, event.seq)
        expect(message.source).toMatchObject({ kind: 'plugin', plugin: COMPACTION_AFTER_PLUGIN })
        expect(compactionAfterId(message)).toBe(compactionId)
      }
      expect(textOf(loggedMessage(session, first!.seq).content)).toBe(REREAD)
      expect(loggedMessage(session, second!.seq).content.map((block) => block.type)).toEqual(['text', 'image'])
      expect(end).toMatchObject({ type: 'compaction/end', data: { compactionId } })
      expect(end!.data).not.toHaveProperty('error')
      // The same commit: one unit (summary, checkpoint, both messages and the audit) written whole.
      expect(session.unitSizeAt(commit.seq)).toBe(5)
      // The next request is built from the folded surface with them, as its last two messages.
      const next = requestAfter(sent, end!.seq + 1)
      expect(next.messages.slice(-2).map(bytesOf)).toEqual(
        [first!, second!].map((event) => bytesOf(loggedMessage(session, event.seq))),
      )
    }
    engine.assertClean()
  })

  it('refuses the compaction when a listener throws, committing nothing', async () => {
    const script = requestsOf(8)
    const engine = await harness({
      engine: { auto: false },
      conversation: (request, index) => script.reply(request, index),
    })
    engine.ctx.on('compaction/after', () => {
      throw new Error('AGENTS.md could not be read')
    })
    const agent = await engine.ctx.agentLoop.create('throws', { ...ROUTE })
    agent.followup('Read files.')
    await agent.whenIdle()
    const before = bytesOfSurface(agent.session)
    const generation = agent.session.surface.replaceGeneration
    await expect(engine.ctx.compaction.compactNow(agent)).rejects.toMatchObject({
      code: 'commit',
      message: expect.stringContaining(
        'a compaction/after listener failed, so the checkpoint was not committed: AGENTS.md could not be read',
      ),
    })
    expect(agent.session.surface.replaceGeneration).toBe(generation)
    expect(bytesOfSurface(agent.session)).toEqual(before)
    const end = agent.session.events.at(-1) as SessionEvent<'compaction/end'>
    expect(end.type).toBe('compaction/end')
    expect(end.data.error).toMatch(/AGENTS\.md could not be read/)
    expect(agent.session.events.some((event) => event.type === 'compaction/summary')).toBe(false)
    engine.assertClean()
  })

  it.each([
    ['empty text', (context: CompactionAfterContext) => context.append(''), /got empty text/],
    [
      'no blocks',
      (context: CompactionAfterContext) => context.append([]),
      /needs text or a non-empty array of content blocks/,
    ],
    [
      'a tool call',
      (context: CompactionAfterContext) =>
        context.append([{ type: 'tool-call', id: 'x', name: 'read', arguments: '{}' }]),
      /block 0 has type "tool-call"; only text and image blocks/,
    ],
  ])('refuses %s with a clear reason', async (_name, append, message) => {
    const script = requestsOf(8)
    const engine = await harness({
      engine: { auto: false },
      conversation: (request, index) => script.reply(request, index),
    })
    engine.ctx.on('compaction/after', append)
    const agent = await engine.ctx.agentLoop.create('invalid', { ...ROUTE })
    agent.followup('Read files.')
    await agent.whenIdle()
    await expect(engine.ctx.compaction.compactNow(agent)).rejects.toMatchObject({
      code: 'commit',
      message: expect.stringMatching(message),
    })
    expect(agent.session.events.some((event) => event.type === 'compaction/summary')).toBe(false)
    engine.assertClean()
  })

  it('refuses an append after the hook ended', async () => {
    const script = requestsOf(8)
    const engine = await harness({
      engine: { auto: false },
      conversation: (request, index) => script.reply(request, index),
    })
    let late: CompactionAfterContext | undefined
    engine.ctx.on('compaction/after', (context) => void (late = context))
    const agent = await engine.ctx.agentLoop.create('late', { ...ROUTE })
    agent.followup('Read files.')
    await agent.whenIdle()
    const result = await engine.ctx.compaction.compactNow(agent)
    expect(result?.appendedSeqs).toEqual([])
    expect(() => late!.append('too late')).toThrow(/append was called after the hook of compaction .* ended/)
    engine.assertClean()
  })
})

function bytesOfSurface(session: { deriveMessages(): readonly Parameters<typeof bytesOf>[0][] }): string[] {
  return session.deriveMessages().map(bytesOf)
}
