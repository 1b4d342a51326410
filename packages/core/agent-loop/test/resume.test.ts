import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { LoopHarness } from './loop-fixture.ts'
import { callTool, mountLoop, ROUTE } from './loop-fixture.ts'

declare module '@warmfold/session' {
  interface SessionEventMap {
    /** Appended by this test's agent/resume listener. */
    'test/resume-note': { note: string }
  }
}

let directory: string
const harnesses: LoopHarness[] = []

beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'warmfold-resume-turn-'))
})
afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.dispose()
  await rm(directory, { recursive: true, force: true })
})

async function fileLoop(responses: Parameters<typeof mountLoop>[0]): Promise<LoopHarness> {
  const harness = await mountLoop(responses, { store: 'file', directory })
  harnesses.push(harness)
  harness.ctx.tools.register({
    name: 'read',
    description: '',
    parameters: { type: 'object' },
    execute: () => 'contents',
  })
  return harness
}

async function storedLines(id: string): Promise<Array<{ seq: number; type: string; data: Record<string, unknown> }>> {
  const text = await readFile(join(directory, `${id}.jsonl`), 'utf8')
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { seq: number; type: string; data: Record<string, unknown> })
}

/** Runs a host that stops (unloads) while its second request is in flight, mid-turn. */
async function stoppedMidTurn(id: string): Promise<void> {
  let started!: () => void
  const inFlight = new Promise<void>((resolve) => (started = resolve))
  const host = await fileLoop((_request, index) => {
    if (index === 0) return { content: 'first turn done' }
    if (index === 1) return callTool('call-1', 'read', '{}')
    started()
    return new Promise(() => {})
  })
  const agent = await host.ctx.agentLoop.create(id, { ...ROUTE })
  agent.followup('one')
  await agent.whenIdle()
  agent.followup('two')
  await inFlight
  harnesses.splice(harnesses.indexOf(host), 1)
  await host.dispose()
  host.assertClean()
}

describe('resuming a session whose last turn never ended', () => {
  it('closes the turn with turn/end { reason: interrupted } and flushes it before the next turn', async () => {
    await stoppedMidTurn('stopped')
    const before = await storedLines('stopped')
    expect(before.map((line) => line.type)).toEqual([
      'turn/start',
      'user/message',
      'request/header',
      'assistant/message',
      'turn/end',
      'turn/start',
      'user/message',
      'assistant/message',
      'tool/result',
    ])

    const resumed = await fileLoop({ content: 'resumed' })
    const agent = await resumed.ctx.agentLoop.create('stopped', { ...ROUTE })
    const closing = {
      turn: 2,
      reason: 'interrupted',
      steps: 1,
      error: 'the process running this turn ended before the turn did; closed when the session was resumed',
    }
    const after = await storedLines('stopped')
    expect(after.slice(0, before.length)).toEqual(before)
    expect(after.slice(before.length).map((line) => [line.type, line.data])).toEqual([['turn/end', closing]])

    agent.followup('three')
    await agent.whenIdle()
    const turns = agent.session.events.flatMap((event) =>
      event.type === 'turn/start' || event.type === 'turn/end' ? [[event.type, event.data.turn]] : [],
    )
    expect(turns).toEqual([
      ['turn/start', 1],
      ['turn/end', 1],
      ['turn/start', 2],
      ['turn/end', 2],
      ['turn/start', 3],
      ['turn/end', 3],
    ])
    expect(agent.lastError).toBeUndefined()
    resumed.assertClean()
  })

  it('appends nothing when the last turn ended, and runs agent/resume listeners before closing a turn', async () => {
    await stoppedMidTurn('hooks')
    const order: string[] = []
    const resumed = await fileLoop({ content: 'resumed' })
    resumed.ctx.on('agent/resume', ({ agent }) => {
      order.push(`resume at ${agent.session.length}`)
      if (order.length === 1) agent.session.append('test/resume-note', { note: 'a listener appends first' })
    })
    const agent = await resumed.ctx.agentLoop.create('hooks', { ...ROUTE })
    expect(order).toEqual(['resume at 9'])
    expect(agent.session.events.slice(9).map((event) => event.type)).toEqual(['test/resume-note', 'turn/end'])
    const again = await resumed.ctx.agentLoop.create('hooks', { ...ROUTE })
    expect(again.session.length).toBe(11)
    expect(again.lastError).toBeUndefined()
    expect(order).toEqual(['resume at 9', 'resume at 11'])
    resumed.assertClean()
  })
})
