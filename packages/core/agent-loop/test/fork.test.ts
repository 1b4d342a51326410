import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { GenerateOptions } from '@warmfold/llm'
import { canonicalJson, textOf } from '@warmfold/llm'
import { afterEach, describe, expect, it } from 'vitest'
import { AgentError, replayWithMessage } from '../src/index.ts'
import type { LoopHarness } from './loop-fixture.ts'
import { callTool, mountLoop, promptElements, ROUTE } from './loop-fixture.ts'

const harnesses: LoopHarness[] = []
const folders: string[] = []
afterEach(async () => {
  for (const harness of harnesses.splice(0)) {
    await harness.dispose()
    harness.assertClean()
  }
  for (const folder of folders.splice(0)) await rm(folder, { recursive: true, force: true })
})

const OPTIONS = {
  ...ROUTE,
  system: 'You are a coding agent.',
  reasoningEffort: 'max',
  temperature: 0.2,
  stop: ['</done>'],
  maxTokens: 2048,
} as const

async function loop(
  responses: Parameters<typeof mountLoop>[0],
  store?: Parameters<typeof mountLoop>[1],
): Promise<LoopHarness> {
  const harness = await mountLoop(responses, store)
  harnesses.push(harness)
  harness.ctx.tools.register({
    name: 'read',
    description: 'Read a file',
    parameters: { type: 'object' },
    execute: () => 'file contents',
  })
  harness.ctx.tools.register({
    name: 'write',
    description: 'Write a file',
    parameters: { type: 'object' },
    execute: () => 'written',
  })
  return harness
}

/** The request without what may differ between a parent and its fork: messages, session, cache tier, signal. */
function envelope(request: GenerateOptions): string {
  const {
    messages: _messages,
    sessionId: _sessionId,
    cacheSessionId: _cacheSessionId,
    cacheTtl: _cacheTtl,
    signal: _signal,
    ...rest
  } = request
  return canonicalJson(rest)
}

describe('agent.fork', () => {
  it('lastRequest is the last answered conversation request: its header, messages as sent and surface nodes', async () => {
    let release!: () => void
    const held = new Promise<void>((resolve) => (release = resolve))
    let arrived!: () => void
    const inFlight = new Promise<void>((resolve) => (arrived = resolve))
    const harness = await loop(async (_request, index) => {
      if (index === 0) return callTool('call-1', 'read', '{}')
      if (index === 1) return { content: 'done' }
      arrived()
      await held
      return { content: 'second done' }
    })
    const agent = await harness.ctx.agentLoop.create('last', OPTIONS)
    expect(agent.lastRequest).toBeUndefined()
    await agent.followup('Fix the bug.')
    const answered = agent.lastRequest!
    const sent = harness.requests[1]!
    expect(answered).toMatchObject({ stage: 'answered', turn: 1, step: 2 })
    expect(answered.header).toEqual(agent.session.requestHeader())
    expect(answered.messages).toEqual(sent.messages)
    // One node per message, the surface as it was sent (the answer is not part of it).
    expect(answered.nodes).toEqual(agent.session.surface.nodes.slice(0, sent.messages.length))
    // A request still in flight does not replace it: a replay reads only an entry that exists.
    const second = agent.followup('And the tests.')
    await inFlight
    expect(harness.requests).toHaveLength(3)
    expect(agent.lastRequest).toBe(answered)
    release()
    await second
    expect(agent.lastRequest).toMatchObject({ stage: 'answered', turn: 2, step: 1 })
  })

  it("sends the parent's last request byte for byte plus one task message, then runs its own tool calls in its own session", async () => {
    const harness = await loop((request, index) => {
      if (index === 0) return callTool('call-1', 'read', '{}')
      if (index === 1) return { content: 'parent done' }
      if (index === 2) return callTool('child-call', 'read', '{"path":"b"}')
      return { content: 'child answer' }
    })
    const parent = await harness.ctx.agentLoop.create('parent', OPTIONS)
    await parent.followup('Fix the bug.')
    const parentEvents = parent.session.length
    const result = await parent.fork({ task: 'Search for the callers of f.' })

    expect(result).toMatchObject({
      sessionId: 'parent.fork-1',
      reason: 'finished',
      answer: 'child answer',
      turn: { reason: 'stop', steps: 2 },
    })
    const [, last, first, second] = harness.requests as [
      GenerateOptions,
      GenerateOptions,
      GenerateOptions,
      GenerateOptions,
    ]
    expect(envelope(first)).toBe(envelope(last))
    expect(first).toMatchObject({
      reasoningEffort: 'max',
      temperature: 0.2,
      stop: ['</done>'],
      maxTokens: 2048,
      sessionId: 'parent.fork-1',
      cacheSessionId: 'parent',
      cacheTtl: 'short',
    })
    expect(last.cacheTtl).toBeUndefined()
    const before = promptElements(last)
    const after = promptElements(first)
    expect(after.slice(0, before.length)).toEqual(before)
    expect(after.length).toBe(before.length + 1)
    expect(textOf(first.messages.at(-1)!.content)).toBe('Search for the callers of f.')
    // The one primitive: the parent's request replayed plus one message (a summary call uses it too).
    const replayed = replayWithMessage(
      { header: parent.session.requestHeader()!, messages: last.messages },
      first.messages.at(-1)!,
    )
    expect(promptElements(first)).toEqual(promptElements(replayed))
    for (const key of ['provider', 'model', 'reasoningEffort', 'temperature', 'stop', 'maxTokens'] as const)
      expect(first[key]).toEqual(replayed[key])
    // The child's own tool call and result go to its session only; the parent's log gains the fork's start and end.
    expect(second.messages.length).toBe(first.messages.length + 2)
    expect(parent.session.events.slice(parentEvents).map((event) => event.type)).toEqual([
      'agent/fork-start',
      'agent/fork-end',
    ])
    expect(parent.session.events.at(-1)!.data).toEqual({
      childSessionId: 'parent.fork-1',
      reason: 'finished',
      answer: 'child answer',
    })
    const child = await harness.ctx.sessions.read('parent.fork-1')
    expect(child.events[0]).toMatchObject({
      type: 'agent/fork',
      data: { parentSessionId: 'parent', parentSeq: parent.session.surface.nodes[2], cacheSessionId: 'parent' },
    })
    expect(child.events.filter((event) => event.type === 'tool/result').at(-1)!.data).toMatchObject({
      toolName: 'read',
      turn: 1,
    })
  })

  it('keeps refused tools in the request and answers a call to one with an error naming the tool', async () => {
    const harness = await loop((_request, index) => {
      if (index === 0) return { content: 'parent done' }
      if (index === 1) return callTool('child-call', 'write', '{}')
      return { content: 'could not write' }
    })
    const parent = await harness.ctx.agentLoop.create('parent', OPTIONS)
    await parent.followup('Look around.')
    const result = await parent.fork({ task: 'Read only.', tools: ['read'], cacheTtl: 'inherit' })
    expect(result.reason).toBe('finished')
    const [last, first] = harness.requests as [GenerateOptions, GenerateOptions]
    expect(first.tools?.map((tool) => tool.name)).toEqual(last.tools?.map((tool) => tool.name))
    // cacheTtl 'inherit': the fork's requests keep the adapter's lifetime.
    expect(first.cacheTtl).toBeUndefined()
    const child = await harness.ctx.sessions.read(result.sessionId)
    const refused = child.events.find((event) => event.type === 'tool/result')!
    expect(refused.data).toMatchObject({
      toolName: 'write',
      error: 'Tool "write" is not available to this fork: the agent that forked it allowed only read.',
    })
  })

  it('refuses, naming the reason, before any request, while the last request is being answered, and into an existing session', async () => {
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    let streaming!: () => void
    const started = new Promise<void>((resolve) => (streaming = resolve))
    const harness = await loop(async (_request, index) => {
      if (index === 0) return { content: 'one' }
      streaming()
      await gate
      return { content: 'two' }
    })
    const parent = await harness.ctx.agentLoop.create('parent', OPTIONS)
    await expect(parent.fork({ task: 'x' })).rejects.toThrow(
      'agent parent cannot fork: it has sent no request in this process yet',
    )
    await parent.followup('first')
    await harness.ctx.sessions.create('taken')
    const error = await parent.fork({ task: 'x', sessionId: 'taken' }).catch((caught: unknown) => caught)
    expect(AgentError.isInstance(error) && error.code).toBe('FORK_REFUSED')
    expect((error as Error).message).toBe(
      'agent parent cannot fork into session taken: it exists already (pass another sessionId)',
    )
    const turn = parent.followup('second')
    await started
    await expect(parent.fork({ task: 'x' })).rejects.toThrow(
      'agent parent cannot fork: its last request (turn 2, step 1) is still being answered',
    )
    release()
    await turn
    expect(parent.session.events.some((event) => event.type === 'agent/fork-start')).toBe(false)
    await expect(parent.fork({ task: '' })).rejects.toThrow(
      'fork option task must be a non-empty string or a user message, got ""',
    )
    await expect(parent.fork({ task: 'x', cacheTtl: 'long' as 'short' })).rejects.toThrow(
      `fork option cacheTtl must be 'short' or 'inherit', got "long"`,
    )
  })

  it("sibling forks wait until the first fork's response has begun (siblingsWaitForFirst), and do not when it is off", async () => {
    for (const wait of [true, false]) {
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
      const parent = await harness.ctx.agentLoop.create('parent', OPTIONS)
      await parent.followup('go')
      const first = parent.fork({ task: 'first' })
      const second = parent.fork({ task: 'second', siblingsWaitForFirst: wait })
      // Long enough for the second fork to be sent if it did not wait.
      await new Promise((resolve) => setTimeout(resolve, 50))
      release()
      expect((await Promise.all([first, second])).map((result) => result.answer)).toEqual([
        'answer to first',
        'answer to second',
      ])
      expect(order).toEqual(
        wait ? ['sent first', 'first began', 'sent second'] : ['sent first', 'sent second', 'first began'],
      )
    }
  })

  it('a resumed fork keeps its lineage: the header it was given and the parent cache key', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'warmfold-fork-'))
    folders.push(directory)
    const first = await loop([{ content: 'parent done' }, { content: 'child answer' }], { store: 'file', directory })
    const parent = await first.ctx.agentLoop.create('parent', OPTIONS)
    await parent.followup('go')
    await parent.fork({ task: 'look' })
    await first.dispose()
    harnesses.splice(harnesses.indexOf(first), 1)

    const second = await loop([{ content: 'again' }], { store: 'file', directory })
    // Other options: the resumed fork still sends its lineage's header.
    const child = await second.ctx.agentLoop.create('parent.fork-1', { ...ROUTE, system: 'something else' })
    expect(child.lineage).toMatchObject({ parentSessionId: 'parent', cacheSessionId: 'parent' })
    await child.followup('and then?')
    const [request] = second.requests as [GenerateOptions]
    expect(envelope(request)).toBe(envelope(first.requests[0]!))
    expect(request).toMatchObject({ cacheSessionId: 'parent', cacheTtl: 'short' })
  })
})
