import { isCheckpointMessage } from '@warmfold/compaction'
import type { GenerateOptions } from '@warmfold/llm'
import { textBlock, textOf, toolCallBlock } from '@warmfold/llm'
import type { ScriptedReply } from '@warmfold/llm/testing'
import { afterEach, describe, expect, it } from 'vitest'
import type { BasicCompactionEngine } from '../src/index.ts'
import type { EngineHarness } from './engine-fixture.ts'
import { elements, filler, mountEngine, ROUTE, stopAfter } from './engine-fixture.ts'

const harnesses: EngineHarness[] = []
afterEach(async () => {
  for (const harness of harnesses.splice(0)) {
    await harness.dispose()
    harness.assertClean()
  }
})

/**
 * Conversation replies: the parent reads a file per step for `parentSteps` steps, then answers;
 * a fork (its request names a `cacheSessionId`) reads one file, then answers.
 */
function parentThenForks(parentSteps: number) {
  return (request: GenerateOptions, index: number): ScriptedReply => {
    if (request.cacheSessionId !== undefined) {
      const last = request.messages.at(-1)!
      return last.content[0]?.type === 'tool-result'
        ? { content: `fork answer ${index}` }
        : { content: [textBlock('Reading.'), toolCallBlock(`fork-${index}`, 'read', '{"path":"src/x.ts"}')] }
    }
    const steps = request.messages.filter((message) => message.role === 'assistant').length
    return steps < parentSteps
      ? {
          content: [
            textBlock(`Step ${index}. ${filler(index, 80)}`),
            toolCallBlock(`call-${index}`, 'read', `{"path":"src/${index}.ts"}`),
          ],
        }
      : { content: 'Parent done.' }
  }
}

async function ledgerEntries(harness: EngineHarness): Promise<number> {
  let entries = 0
  for (const id of await harness.ctx.sessions.list())
    entries += (await harness.ctx.sessions.read(id)).events.filter((event) => event.type === 'cache/observation').length
  return entries
}

describe('forks and folds', () => {
  it('forks a parent that has folded, with CompactionInvariants mounted: the child replays the checkpoint', async () => {
    const harness = await mountEngine({
      conversation: (request, index) => (index < 3 ? stopAfter(2)(request, index) : { content: 'child answer' }),
    })
    harnesses.push(harness)
    const parent = await harness.ctx.agentLoop.create('parent', { ...ROUTE, system: 'You are a coding agent.' })
    await parent.followup('Refactor the project.')
    expect(await harness.ctx.compaction.compactNow(parent)).not.toBeNull()
    await parent.followup('Now the tests.')
    const result = await parent.fork({ task: 'List the callers.' })
    expect(result).toMatchObject({ reason: 'finished', answer: 'child answer' })
    const [last, first] = harness.conversation().slice(-2) as [GenerateOptions, GenerateOptions]
    expect(isCheckpointMessage(last.messages[0]!)).toBe(true)
    expect(elements(first).slice(0, -1)).toEqual(elements(last))
    expect(textOf(first.messages.at(-1)!.content)).toBe('List the callers.')
    const child = await harness.ctx.sessions.read('parent.fork-1')
    expect(child.events.slice(0, 2).map((event) => [event.type, event.surface?.op])).toEqual([
      ['agent/fork', undefined],
      ['user/message', 'append'],
    ])
  })

  it('a fork of a parent above the soft threshold starts no background fold; every request is in the ledger', async () => {
    let release!: () => void
    const summary = new Promise<ScriptedReply>((resolve) => (release = () => resolve({ content: 'Summary.' })))
    const harness = await mountEngine({
      ledger: {},
      conversation: parentThenForks(12),
      // The parent's summary is still being written while the forks run.
      summary: () => summary,
      engine: { maxTokens: 1000, idle: { enabled: false }, background: { startRatio: 0.5 } },
    })
    harnesses.push(harness)
    const parent = await harness.ctx.agentLoop.create('parent', { ...ROUTE, system: 'You are a coding agent.' })
    await parent.followup('Refactor the project.')
    // The parent itself armed a background fold above S (0.5 × 6400 tokens).
    expect(harness.summaries().map((request) => request.sessionId)).toEqual(['parent'])
    for (let fork = 0; fork < 3; fork++)
      expect(await parent.fork({ task: `Task ${fork}.` })).toMatchObject({ reason: 'finished' })
    // Three forks of two steps each, and no summary call of theirs.
    expect(harness.conversation().filter((request) => request.cacheSessionId === 'parent')).toHaveLength(6)
    expect(harness.summaries().map((request) => request.sessionId)).toEqual(['parent'])
    release()
    await (harness.ctx.compaction as BasicCompactionEngine).whenFoldsSettle(parent.session)
    expect(await ledgerEntries(harness)).toBe(harness.requests.length)
  })

  it('closing a session with a background summary in flight: the aborted call is in the ledger, with no warning', async () => {
    const harness = await mountEngine({
      ledger: {},
      conversation: parentThenForks(12),
      // The summary call never answers on its own: the close aborts it.
      summary: () => new Promise<ScriptedReply>(() => {}),
      engine: { maxTokens: 1000, idle: { enabled: false }, background: { startRatio: 0.5 } },
    })
    harnesses.push(harness)
    const parent = await harness.ctx.agentLoop.create('parent', { ...ROUTE, system: 'You are a coding agent.' })
    await parent.followup('Refactor the project.')
    expect(harness.summaries()).toHaveLength(1)
    await harness.ctx.sessions.close(parent.session)
    const log = await harness.ctx.sessions.read('parent')
    expect(log.events.slice(-2).map((event) => event.type)).toEqual(['compaction/end', 'cache/observation'])
    expect(log.events.at(-1)!.data).toMatchObject({ purpose: 'compaction', finish: 'aborted' })
    expect(await ledgerEntries(harness)).toBe(harness.requests.length)
  })
})
