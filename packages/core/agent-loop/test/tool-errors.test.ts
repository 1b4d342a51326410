import type { ToolResultMessage } from '@warmfold/llm'
import type { SessionEvent } from '@warmfold/session'
import { afterEach, describe, expect, it } from 'vitest'
import type { Agent } from '../src/index.ts'
import type { LoopHarness } from './loop-fixture.ts'
import { callTool, mountLoop, ROUTE } from './loop-fixture.ts'

const harnesses: LoopHarness[] = []
afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.dispose()
})

async function runOneCall(
  args: string,
  name: string,
  register: (harness: LoopHarness) => void,
): Promise<{ harness: LoopHarness; agent: Agent; result: SessionEvent<'tool/result'> }> {
  const harness = await mountLoop([callTool('call-1', name, args), { content: 'recovered' }])
  harnesses.push(harness)
  register(harness)
  const agent = await harness.ctx.agentLoop.create('errors', { ...ROUTE, toolTimeoutMs: 5000 })
  agent.followup('go')
  await agent.whenIdle()
  const result = agent.session.events.find((event) => event.type === 'tool/result') as SessionEvent<'tool/result'>
  return { harness, agent, result }
}

function resultText(event: SessionEvent<'tool/result'>): string {
  const block = (event.data.message as ToolResultMessage).content[0]
  return block.content.map((part) => (part.type === 'text' ? part.text : '')).join('')
}

describe('bad model output becomes an error tool result, never a crash', () => {
  it('names an unknown tool and lists the available ones', async () => {
    const { result, agent, harness } = await runOneCall('{}', 'delete_everything', (harness) => {
      harness.ctx.tools.register({ name: 'read', description: '', parameters: { type: 'object' }, execute: () => 'x' })
    })
    expect(resultText(result)).toBe('Unknown tool "delete_everything". Available tools: read.')
    expect(result.data.message.content[0].isError).toBe(true)
    expect(result.data.error).toContain('delete_everything')
    expect(agent.session.events.at(-1)?.data).toMatchObject({ reason: 'stop' })
    expect(harness.adapter.requests).toHaveLength(2)
    harness.assertClean()
  })

  it('names arguments that are not valid JSON and keeps the raw arguments in the log', async () => {
    const { result, agent, harness } = await runOneCall('{"path": src/a.ts', 'read', (harness) => {
      harness.ctx.tools.register({ name: 'read', description: '', parameters: { type: 'object' }, execute: () => 'x' })
    })
    expect(resultText(result)).toMatch(
      /^Invalid arguments for tool "read": not valid JSON \(.+\)\. Arguments received: \{"path": src\/a\.ts$/,
    )
    const call = agent.session.events.find((event) => event.type === 'assistant/message')
    expect(JSON.stringify(call?.data)).toContain(JSON.stringify('{"path": src/a.ts'))
    harness.assertClean()
  })

  it('reports a tool that throws', async () => {
    const { result, harness } = await runOneCall('{}', 'boom', (harness) => {
      harness.ctx.tools.register({
        name: 'boom',
        description: '',
        parameters: { type: 'object' },
        execute: () => {
          throw new Error('disk on fire')
        },
      })
    })
    expect(resultText(result)).toBe('Tool "boom" failed: disk on fire')
    harness.assertClean()
  })

  it('abandons a tool that exceeds its timeout and aborts its signal', async () => {
    let toolSignal: AbortSignal | undefined
    const { result, harness } = await runOneCall('{}', 'hang', (harness) => {
      harness.ctx.tools.register({
        name: 'hang',
        description: '',
        parameters: { type: 'object' },
        timeoutMs: 30,
        execute: (_args, { signal }) => {
          toolSignal = signal
          return new Promise<string>(() => {})
        },
      })
    })
    expect(resultText(result)).toBe('Tool "hang" timed out after 30 ms.')
    expect(toolSignal?.aborted).toBe(true)
    harness.assertClean()
  })

  it('reports a tool that returns nothing usable', async () => {
    const { result, harness } = await runOneCall('{}', 'empty', (harness) => {
      harness.ctx.tools.register({ name: 'empty', description: '', parameters: { type: 'object' }, execute: () => [] })
    })
    expect(resultText(result)).toContain('returned no usable content')
    harness.assertClean()
  })
})

describe('tool registry', () => {
  it('offers tools in registration order and removes them when their plugin unloads', async () => {
    const harness = await mountLoop({ content: 'ok' })
    harnesses.push(harness)
    harness.ctx.tools.register({
      name: 'zeta',
      description: 'z',
      parameters: { type: 'object', required: ['b', 'a'], properties: { b: {}, a: {} } },
      execute: () => '',
    })
    const fork = harness.ctx.plugin({
      inject: ['tools'],
      apply(ctx) {
        ctx.tools.register({ name: 'alpha', description: 'a', parameters: { type: 'object' }, execute: () => '' })
      },
    })
    expect(harness.ctx.tools.definitions().map((tool) => tool.name)).toEqual(['zeta', 'alpha'])
    expect(JSON.stringify(harness.ctx.tools.definitions()[0]!.parameters)).toBe(
      '{"properties":{"a":{},"b":{}},"required":["b","a"],"type":"object"}',
    )
    fork.dispose()
    expect(harness.ctx.tools.names()).toEqual(['zeta'])
    expect(() =>
      harness.ctx.tools.register({ name: 'zeta', description: '', parameters: {}, execute: () => '' }),
    ).toThrow('a tool named "zeta" is already registered')
    expect(() =>
      harness.ctx.tools.register({ name: 'bad name', description: '', parameters: {}, execute: () => '' }),
    ).toThrow('"bad name"')
    harness.assertClean()
  })
})
