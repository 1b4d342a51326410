import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { canonicalJson } from '@warmfold/llm'
import { afterEach, describe, expect, it } from 'vitest'
import type { LoopHarness } from './loop-fixture.ts'
import { callTool, mountLoop, ROUTE, strictlyExtends } from './loop-fixture.ts'

const harnesses: LoopHarness[] = []
afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.dispose()
})

function readTool(harness: LoopHarness) {
  harness.ctx.tools.register({
    name: 'read',
    description: 'Read a file',
    parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    execute: (args) => `contents of ${(args as { path: string }).path}`,
  })
  harness.ctx.tools.register({
    name: 'list',
    description: 'List files',
    parameters: { type: 'object' },
    execute: () => 'a.ts\nb.ts',
  })
}

describe('conversation requests are append-only (C1)', () => {
  it('every request of a 40-step tool session strictly extends the previous one', async () => {
    const steps = 40
    const harness = await mountLoop((_request, index) =>
      index < steps
        ? callTool(`call-${index}`, index % 2 ? 'read' : 'list', `{"path":"src/${index}.ts"}`)
        : { content: 'done' },
    )
    harnesses.push(harness)
    readTool(harness)
    const agent = await harness.ctx.agentLoop.create('c1', {
      ...ROUTE,
      reasoningEffort: 'max',
      temperature: 0.2,
      stop: ['</end>'],
      system: 'You are a coding agent.',
    })
    agent.followup('Refactor the project.')
    await agent.whenIdle()

    expect(harness.requests).toHaveLength(steps + 1)
    for (let index = 1; index < harness.requests.length; index++) {
      expect(
        strictlyExtends(harness.requests[index - 1]!, harness.requests[index]!),
        `request ${index} rewrites request ${index - 1}`,
      ).toBe(true)
    }
    const envelopes = new Set(
      harness.requests.map((request) =>
        canonicalJson([
          request.provider,
          request.model,
          request.reasoningEffort,
          request.temperature,
          request.stop,
          request.maxTokens,
        ]),
      ),
    )
    expect(envelopes.size).toBe(1)
    expect(harness.requests[0]!.purpose).toBe('conversation')
    expect(harness.requests[0]!.tools?.map((tool) => tool.name)).toEqual(['read', 'list'])
    expect(agent.session.events.filter((event) => event.type === 'request/header')).toHaveLength(1)
    const end = agent.session.events.at(-1)
    expect(end?.type).toBe('turn/end')
    expect(end?.data).toMatchObject({ reason: 'stop', steps: steps + 1 })
    harness.assertClean()
  })

  it('logs the materialized defaults in the header and sends exactly the logged header', async () => {
    const harness = await mountLoop({ content: 'ok' })
    harnesses.push(harness)
    const agent = await harness.ctx.agentLoop.create('defaults', { ...ROUTE })
    agent.followup('hi')
    await agent.whenIdle()
    const header = agent.session.requestHeader()
    expect(header?.config).toEqual({ ...ROUTE, reasoningEffort: 'high', maxTokens: 4096 })
    expect(harness.adapter.requests[0]).toMatchObject({ reasoningEffort: 'high', maxTokens: 4096 })
    harness.assertClean()
  })

  it('resumes from the file store: the first request after a restart extends the last one before it', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'warmfold-resume-'))
    try {
      const options = { ...ROUTE, reasoningEffort: 'max', system: 'You are a coding agent.' }
      const first = await mountLoop(
        (_request, index) =>
          index < 10 ? callTool(`call-${index}`, 'read', `{"path":"f${index}"}`) : { content: 'paused' },
        { store: 'file', directory },
      )
      readTool(first)
      const agent = await first.ctx.agentLoop.create('resume', options)
      agent.followup('Start.')
      await agent.whenIdle()
      await first.ctx.sessions.flush(agent.session)
      const lastBefore = first.requests.at(-1)!
      const headersBefore = agent.session.events.filter((event) => event.type === 'request/header').length
      await first.dispose()
      first.assertClean()

      const second = await mountLoop({ content: 'resumed' }, { store: 'file', directory })
      harnesses.push(second)
      readTool(second)
      const resumed = await second.ctx.agentLoop.create('resume', options)
      expect(resumed.session.length).toBe(agent.session.length)
      resumed.followup('Continue.')
      await resumed.whenIdle()
      const firstAfter = second.requests[0]!
      expect(strictlyExtends(lastBefore, firstAfter)).toBe(true)
      expect(canonicalJson([firstAfter.reasoningEffort, firstAfter.maxTokens])).toBe(
        canonicalJson([lastBefore.reasoningEffort, lastBefore.maxTokens]),
      )
      expect(resumed.session.events.filter((event) => event.type === 'request/header')).toHaveLength(headersBefore)
      second.assertClean()
    } finally {
      await rm(directory, { recursive: true, force: true })
    }
  })

  it('logs a resume header when the options differ after a restart, and a change header when a hook changes them', async () => {
    const harness = await mountLoop({ content: 'ok' })
    harnesses.push(harness)
    const agent = await harness.ctx.agentLoop.create('headers', { ...ROUTE, reasoningEffort: 'low' })
    agent.followup('one')
    await agent.whenIdle()
    await harness.ctx.sessions.close(agent.session)
    const restarted = await harness.ctx.agentLoop.create('headers', { ...ROUTE, reasoningEffort: 'max' })
    restarted.followup('two')
    await restarted.whenIdle()
    harness.ctx.on('agent/request', (context) => {
      context.header = { ...context.header, config: { ...context.header.config, temperature: 0.5 } }
    })
    restarted.followup('three')
    await restarted.whenIdle()
    const reasons = restarted.session.events.flatMap((event) =>
      event.type === 'request/header' ? [event.data.reason] : [],
    )
    expect(reasons).toEqual(['initial', 'resume', 'change'])
    expect(harness.adapter.requests.map((request) => [request.reasoningEffort, request.temperature])).toEqual([
      ['low', undefined],
      ['max', undefined],
      ['max', 0.5],
    ])
    harness.assertClean()
  })
})
