import { access, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { StreamChunk } from '@warmfold/llm'
import { textOf } from '@warmfold/llm'
import type { Session } from '@warmfold/session'
import { SessionError } from '@warmfold/session'
import { afterEach, describe, expect, it } from 'vitest'
import { AgentError } from '../src/index.ts'
import type { LoopHarness } from './loop-fixture.ts'
import { callTool, mountLoop, ROUTE } from './loop-fixture.ts'

const harnesses: LoopHarness[] = []
const folders: string[] = []
afterEach(async () => {
  for (const harness of harnesses.splice(0)) {
    await harness.dispose()
    harness.assertClean()
  }
  for (const folder of folders.splice(0)) await rm(folder, { recursive: true, force: true })
})

async function folder(): Promise<string> {
  const directory = await mkdtemp(join(tmpdir(), 'warmfold-fork-faults-'))
  folders.push(directory)
  return directory
}

async function loop(responses: Parameters<typeof mountLoop>[0], directory?: string): Promise<LoopHarness> {
  const harness = await mountLoop(responses, directory ? { store: 'file', directory } : undefined)
  harnesses.push(harness)
  harness.ctx.tools.register({
    name: 'read',
    description: 'Read a file',
    parameters: { type: 'object' },
    execute: () => 'file contents',
  })
  return harness
}

/** The `agent/fork-start` and `agent/fork-end` events of `session`, as `start <child>` / `end <child> <reason>`. */
function forkEvents(session: Session): string[] {
  return session.events.flatMap((event) =>
    event.type === 'agent/fork-start'
      ? [`start ${event.data.childSessionId}`]
      : event.type === 'agent/fork-end'
        ? [`end ${event.data.childSessionId} ${event.data.reason}`]
        : [],
  )
}

describe('agent.fork under faults', () => {
  it('concurrent forks into one sessionId: one runs, the others are refused as "exists" before logging a start', async () => {
    const harness = await loop(
      (request, index) => {
        if (index === 0) return { content: 'parent done' }
        return { content: `answer to ${textOf(request.messages.at(-1)!.content)}` }
      },
      await folder(),
    )
    const parent = await harness.ctx.agentLoop.create('parent', ROUTE)
    await parent.followup('go')
    const settled = await Promise.allSettled(
      ['a', 'b', 'c'].map((task) => parent.fork({ task, sessionId: 'child', siblingsWaitForFirst: false })),
    )
    expect(settled.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'rejected'])
    expect((settled[0] as PromiseFulfilledResult<{ answer?: string }>).value.answer).toBe('answer to a')
    for (const outcome of settled.slice(1)) {
      const error = (outcome as PromiseRejectedResult).reason as unknown
      expect(AgentError.isInstance(error) && error.code).toBe('FORK_REFUSED')
      expect((error as Error).message).toBe(
        'agent parent cannot fork into session child: it exists already (pass another sessionId)',
      )
    }
    expect(forkEvents(parent.session)).toEqual(['start child', 'end child finished'])
  })

  it('a fork whose replay the store refuses fails, and leaves no child behind (file store: no file, no lock)', async () => {
    const directory = await folder()
    const harness = await loop([callTool('call-1', 'read', '{}'), { content: 'parent done' }], directory)
    // A host validator that refuses the replayed assistant message of any fork's session.
    harness.ctx.on('session/open', (session: Session) => {
      if (session.id.includes('.fork-'))
        session.addValidator((candidate) => {
          if (candidate.type === 'assistant/message') throw new Error('this host refuses replayed answers')
        })
    })
    const parent = await harness.ctx.agentLoop.create('parent', ROUTE)
    await parent.followup('go')
    const result = await parent.fork({ task: 'look' })
    expect(result).toMatchObject({ sessionId: 'parent.fork-1', reason: 'failed' })
    expect(result.error).toBe(
      "the fork's turn ended with reason error: writing the fork's session parent.fork-1 failed (it was deleted): " +
        'this host refuses replayed answers',
    )
    const read = await harness.ctx.sessions.read('parent.fork-1').catch((error: unknown) => error)
    expect(SessionError.isInstance(read) && read.code).toBe('NOT_FOUND')
    for (const file of ['parent.fork-1.jsonl', 'parent.fork-1.jsonl.lock'])
      await expect(access(join(directory, file))).rejects.toThrow('ENOENT')
    expect(forkEvents(parent.session)).toEqual(['start parent.fork-1', 'end parent.fork-1 failed'])
  })

  it('a fork from a resumed parent numbers on from the forks its log started', async () => {
    const directory = await folder()
    const first = await loop([{ content: 'parent done' }, { content: 'child one' }], directory)
    const parent = await first.ctx.agentLoop.create('parent', ROUTE)
    await parent.followup('go')
    expect((await parent.fork({ task: 'one' })).sessionId).toBe('parent.fork-1')
    await first.dispose()
    harnesses.splice(harnesses.indexOf(first), 1)

    const second = await loop([{ content: 'again' }, { content: 'child two' }], directory)
    const resumed = await second.ctx.agentLoop.create('parent', ROUTE)
    await resumed.followup('more')
    expect(await resumed.fork({ task: 'two' })).toMatchObject({ sessionId: 'parent.fork-2', answer: 'child two' })
    expect(forkEvents(resumed.session)).toEqual([
      'start parent.fork-1',
      'end parent.fork-1 finished',
      'start parent.fork-2',
      'end parent.fork-2 finished',
    ])
  })

  it('numbers are never reused: a resumed parent goes on past the highest default number its log started', async () => {
    const directory = await folder()
    const first = await loop([{ content: 'parent done' }, { content: 'child' }], directory)
    const parent = await first.ctx.agentLoop.create('parent', ROUTE)
    await parent.followup('go')
    await first.ctx.sessions.create('taken')
    await expect(parent.fork({ task: 'x', sessionId: 'taken' })).rejects.toThrow('it exists already')
    // The refused fork used number 1 up; its start was never logged, so the log holds one start.
    expect((await parent.fork({ task: 'x' })).sessionId).toBe('parent.fork-2')
    await first.dispose()
    harnesses.splice(harnesses.indexOf(first), 1)

    const second = await loop(
      [{ content: 'again' }, { content: 'three' }, { content: 'five' }, { content: 'six' }],
      directory,
    )
    const resumed = await second.ctx.agentLoop.create('parent', ROUTE)
    await resumed.followup('more')
    // One start logged, but parent.fork-2 exists: the next is 3.
    expect(await resumed.fork({ task: 'three' })).toMatchObject({ sessionId: 'parent.fork-3', reason: 'finished' })
    // A fork given a default-shaped id moves the numbering past it.
    await resumed.fork({ task: 'five', sessionId: 'parent.fork-5' })
    expect(await resumed.fork({ task: 'six' })).toMatchObject({ sessionId: 'parent.fork-6', reason: 'finished' })
  })

  it("refuses a fork once the parent's next request has streamed its first chunk, until it is answered", async () => {
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    let streamed!: () => void
    const firstChunk = new Promise<void>((resolve) => (streamed = resolve))
    async function* heldAnswer(): AsyncGenerator<StreamChunk> {
      yield { type: 'block-start', index: 0, blockType: 'text' }
      yield { type: 'text-delta', index: 0, delta: 'Half an answer' }
      streamed()
      await gate
      yield { type: 'finish', reason: 'stop' }
    }
    const harness = await loop((_request, index) => {
      if (index === 0) return { content: 'first done' }
      if (index === 1) return { chunks: heldAnswer() }
      return { content: 'child answer' }
    })
    const parent = await harness.ctx.agentLoop.create('parent', ROUTE)
    await parent.followup('first')
    const turn = parent.followup('second')
    await firstChunk
    expect(parent.status).toBe('running')
    await expect(parent.fork({ task: 'x' })).rejects.toThrow(
      'agent parent cannot fork: its last request (turn 2, step 1) is still being answered',
    )
    release()
    await turn
    const result = await parent.fork({ task: 'x' })
    expect(result.reason).toBe('finished')
    // The fork replays the request now answered: both user messages and the streamed answer's request.
    expect(harness.requests[2]!.messages.map((message) => textOf(message.content))).toEqual([
      'first',
      'first done',
      'second',
      'x',
    ])
  })

  it('by default a second fork from one request waits for the first to begin answering', async () => {
    const order: string[] = []
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    const harness = await loop(async (request, index) => {
      if (index === 0) return { content: 'parent done' }
      const task = textOf(request.messages.at(-1)!.content)
      order.push(`sent ${task}`)
      if (task === 'first') {
        await gate
        order.push('first began')
      }
      return { content: `answer to ${task}` }
    })
    const parent = await harness.ctx.agentLoop.create('parent', ROUTE)
    await parent.followup('go')
    const forks = [parent.fork({ task: 'first' }), parent.fork({ task: 'second' })]
    // Long enough for the second fork to be sent if it did not wait.
    await new Promise((resolve) => setTimeout(resolve, 50))
    release()
    await Promise.all(forks)
    expect(order).toEqual(['sent first', 'first began', 'sent second'])
  })
})
