import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pinnedSeqs } from '@warmfold/compaction'
import { textOf } from '@warmfold/llm'
import type { SessionEvent } from '@warmfold/session'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { EngineHarness, EngineHarnessOptions } from './engine-fixture.ts'
import { mountEngine, ROUTE } from './engine-fixture.ts'
import {
  bytesOf,
  folds,
  foldThreeTimes,
  loggedMessage,
  recordConversation,
  requestAfter,
  requestsOf,
} from './fold-survival-fixture.ts'

let directory: string
const harnesses: EngineHarness[] = []
beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'warmfold-fold-resume-'))
})
afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.dispose()
  await rm(directory, { recursive: true, force: true })
})

async function harness(options: EngineHarnessOptions): Promise<EngineHarness> {
  const created = await mountEngine(options)
  harnesses.push(created)
  return created
}

describe('pins across prunes and resumes', () => {
  it('never prunes a pinned tool result: every fold carries it whole while the pruner shortens the others', async () => {
    const script = requestsOf(8)
    const engine = await harness({
      // Every read result (1200 characters) is over this budget.
      pruner: { thresholdChars: 1000, headChars: 600, tailChars: 100 },
      conversation: (request, index) => script.reply(request, index),
    })
    const { session, sent, pinned } = await foldThreeTimes(engine, script, 'pruned')
    const pinnedResult = pinned[2]!
    const prunes = session.events.filter(
      (event) => event.type === 'compaction/prune',
    ) as SessionEvent<'compaction/prune'>[]
    expect(prunes.length).toBeGreaterThan(0)
    for (const prune of prunes) expect(prune.data.shadowedSeqs).not.toContain(pinnedResult)
    const original = loggedMessage(session, pinnedResult)
    const block = original.content[0]!
    expect(block.type === 'tool-result' ? textOf(block.content) : '').toHaveLength(1200)
    for (const commit of folds(session)) {
      expect(commit.data.carriedSeqs).toEqual(pinned)
      const next = requestAfter(sent, commit.seq + 2)
      expect(bytesOf(next.messages[3]!)).toBe(bytesOf(original))
    }
    engine.assertClean()
  })

  it('a resumed session (JSONL file store) reproduces the folded surface and its pins, and goes on carrying them', async () => {
    const hook = { engine: { keepUserMessages: { maxTokens: 2000 } }, directory }
    const script = requestsOf(8)
    const first = await harness({ ...hook, conversation: (request, index) => script.reply(request, index) })
    first.ctx.on('compaction/after', (context) => context.append('Rules, re-read after the fold.'))
    const { session, sent, pinned } = await foldThreeTimes(first, script, 'resumed')
    await first.ctx.sessions.flush(session)
    const surface = session.deriveMessages().map(bytesOf)
    const nodes = [...session.surface.nodes]
    const lastRequest = sent.at(-1)!.request
    const pins = [...pinnedSeqs(session)]
    // The summary, its checkpoint, the hook's message and the audit were written as one unit.
    const stored = (await readFile(join(directory, 'resumed.jsonl'), 'utf8'))
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { seq: number; unit?: number })
    for (const commit of folds(session)) expect(stored[commit.seq]!.unit).toBe(4)
    harnesses.splice(harnesses.indexOf(first), 1)
    await first.dispose()
    first.assertClean()

    // A fresh host on the same folder.
    const second = await harness({ ...hook, conversation: (request, index) => script.reply(request, index) })
    second.ctx.on('compaction/after', (context) => context.append('Rules, re-read after the fold.'))
    const agent = await second.ctx.agentLoop.create('resumed', { ...ROUTE, system: 'You are a coding agent.' })
    const resumed = agent.session
    expect(resumed).not.toBe(session)
    expect(resumed.deriveMessages().map(bytesOf)).toEqual(surface)
    expect([...resumed.surface.nodes]).toEqual(nodes)
    expect([...pinnedSeqs(resumed)]).toEqual(pins)
    // The next request replays the last one byte for byte and only appends to it.
    const resumedSent = recordConversation(second, resumed)
    script.next()
    agent.followup('Request after the resume: finish module 9.')
    await agent.whenIdle()
    const [afterResume] = resumedSent
    expect(afterResume!.request.messages.slice(0, lastRequest.messages.length).map(bytesOf)).toEqual(
      lastRequest.messages.map(bytesOf),
    )
    // More requests until the resumed session folds again: the same pins lead the carried list.
    const before = folds(resumed).length
    for (let turn = 0; folds(resumed).length === before; turn++) {
      if (turn > 10) throw new Error('no fold after the resume')
      script.next()
      agent.followup(`Resumed request ${turn}.`)
      await agent.whenIdle()
    }
    expect(folds(resumed).at(-1)!.data.carriedSeqs!.slice(0, 3)).toEqual(pinned)
    second.assertClean()
  })
})
