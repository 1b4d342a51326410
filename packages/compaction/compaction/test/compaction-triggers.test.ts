import type { Context, ForkScope } from '@cordisjs/core'
import { AgentLoop, MissingServiceError, ToolRegistry } from '@warmfold/agent-loop'
import type { GenerateOptions } from '@warmfold/llm'
import { createMessage, LlmError, LlmRuntime, textBlock, toolCallBlock } from '@warmfold/llm'
import { ScriptedAdapter } from '@warmfold/llm/testing'
import type { SessionEvent } from '@warmfold/session'
import { SessionStore } from '@warmfold/session'
import type { TestContext } from '@warmfold/test-utils'
import { createTestContext } from '@warmfold/test-utils'
import { afterEach, describe, expect, it } from 'vitest'
import type { CompactionAgent, CompactionResult, CompactionTrigger, ManualCompactionAgent } from '../src/index.ts'
import { checkpointSource, CompactionEngine, CompactionInvariants, toolPairingBalancedAfter } from '../src/index.ts'

/**
 * An engine that implements only the contract and wires nothing itself. Pressure: nothing to do.
 * Overflow: folds the largest balanced head that keeps the newest node into one short checkpoint.
 */
class ContractOnlyEngine extends CompactionEngine<{ auto?: boolean } | undefined> {
  readonly calls: CompactionTrigger[] = []
  summaryText = 'Earlier: files were read.'
  constructor(ctx: Context, config: { auto?: boolean } | undefined) {
    super(ctx, config)
  }
  async compactIfNeeded(agent: CompactionAgent, trigger: CompactionTrigger): Promise<CompactionResult | null> {
    this.calls.push(trigger)
    const { nodes } = agent.session.surface
    if (trigger === 'pressure') return null
    for (let end = nodes.length - 2; end > 0; end--) {
      if (toolPairingBalancedAfter(agent.session, nodes[end] as number)) return this.compactRegion(0, end, agent)
    }
    return null
  }
  async compactNow(agent: ManualCompactionAgent): Promise<CompactionResult | null> {
    return agent.runMaintenance(async () => null)
  }
  async compactRegion(start: number, end: number, agent: CompactionAgent): Promise<CompactionResult> {
    const { session } = agent
    const compactionId = `fold-${session.length}`
    const shadowedSeqs = session.surface.nodes.slice(start, end + 1)
    const summary = [textBlock(this.summaryText)]
    const startSeq = session.append('compaction/start', { compactionId, turn: null, trigger: 'context-overflow' }).seq
    const summaryEvent = {
      compactionId,
      summary,
      shadowedRange: { start, end },
      shadowedSeqs,
      shadowedTokenCount: shadowedSeqs.length,
      ...agent.options,
    }
    const summarySeq = session.append('compaction/summary', summaryEvent).seq
    const message = createMessage({ role: 'user', content: summary, source: checkpointSource(compactionId) })
    const checkpointSeq = session.append(
      'user/message',
      { message },
      { op: 'replace', start, end, sourceEventSeqs: shadowedSeqs },
    ).seq
    const endSeq = session.append('compaction/end', { compactionId, turn: null }).seq
    return {
      compactionId,
      startSeq,
      summarySeq,
      checkpointSeq,
      endSeq,
      summary,
      shadowedRange: { start, end },
      shadowedSeqs,
      shadowedTokenCount: shadowedSeqs.length,
    }
  }
}

class SelfWiredEngine extends ContractOnlyEngine {
  static override autoTrigger = false
}

const ROUTE = { provider: 'scripted', model: 'scripted-model' } as const
/** Conversation prompts with more messages than this are rejected as too long. */
const MAX_MESSAGES = 6

interface Host extends TestContext {
  /** Conversation requests the provider received, rejected ones included. */
  requests: GenerateOptions[]
  mount(
    engine: typeof ContractOnlyEngine,
    config?: { auto?: boolean },
  ): { engine: ContractOnlyEngine; scope: ForkScope }
}

const hosts: Host[] = []
afterEach(async () => {
  for (const host of hosts.splice(0)) await host.dispose()
})

/** The real runtime, store, tools and loop; in each session the model reads a file on its first `toolSteps` answers. */
async function host(toolSteps = 5): Promise<Host> {
  const context = await createTestContext()
  const { ctx } = context
  ctx.plugin(LlmRuntime)
  ctx.plugin(SessionStore, {})
  ctx.plugin(ToolRegistry)
  ctx.plugin(AgentLoop)
  ctx.plugin(CompactionInvariants)
  const answered = new Map<string | undefined, number>()
  const requests: GenerateOptions[] = []
  ctx.llm.registerAdapter(
    'scripted',
    new ScriptedAdapter({
      responses: (request) => {
        requests.push(request)
        if (request.messages.length > MAX_MESSAGES)
          return {
            error: new LlmError(
              'CONTEXT_WINDOW_EXCEEDED',
              `${request.messages.length} messages, the limit is ${MAX_MESSAGES}`,
            ),
          }
        const index = answered.get(request.sessionId) ?? 0
        answered.set(request.sessionId, index + 1)
        return index === toolSteps
          ? { content: 'Done.' }
          : { content: [toolCallBlock(`call-${index}`, 'read', `{"path":"f${index}"}`)] }
      },
    }),
  )
  ctx.tools.register({
    name: 'read',
    description: 'Read a file',
    parameters: { type: 'object' },
    execute: () => 'contents',
  })
  const mount = (engine: typeof ContractOnlyEngine, config?: { auto?: boolean }) => {
    const scope = ctx.plugin(engine, config)
    return { engine: ctx.get('compaction') as ContractOnlyEngine, scope }
  }
  const created = Object.assign(context, { requests, mount })
  hosts.push(created)
  return created
}

async function turn(ctx: Context, sessionId: string, text = 'Read the files.') {
  const agent = await ctx.agentLoop.create(sessionId, { ...ROUTE })
  agent.followup(text)
  await agent.whenIdle()
  return agent
}

function turnEnds(events: readonly SessionEvent[]) {
  return events
    .filter((event) => event.type === 'turn/end')
    .map((event) => event.data as { reason: string; errorCode?: string; error?: string })
}

describe('CompactionEngine triggers', () => {
  it('calls a contract-only engine with pressure before every request and recovers an overflow with one retry', async () => {
    const { ctx, requests, mount, assertClean } = await host()
    const { engine } = mount(ContractOnlyEngine)
    const agent = await turn(ctx, 'triggered')
    expect(turnEnds(agent.session.events)).toEqual([{ turn: 1, reason: 'stop', steps: 6 }])
    // A pressure before every request (a retried step runs its pre-step again), an overflow after each rejected one.
    const rejected = requests.flatMap((request, index) => (request.messages.length > MAX_MESSAGES ? [index] : []))
    expect(rejected.length).toBeGreaterThan(0)
    expect(engine.calls).toEqual(
      requests.flatMap((_request, index) =>
        rejected.includes(index) ? ['pressure', 'context-overflow'] : ['pressure'],
      ),
    )
    // Each retry sent the folded surface: the checkpoint first, then the newest step.
    for (const index of rejected) {
      const retry = requests[index + 1]!
      expect(retry.messages.length).toBeLessThan(requests[index]!.messages.length)
      expect(retry.messages[0]?.content).toEqual([textBlock('Earlier: files were read.')])
    }
    assertClean()
  })

  it('retries only when the surface really shrank', async () => {
    const { ctx, requests, mount, assertClean } = await host()
    const { engine } = mount(ContractOnlyEngine)
    // An engine that changes nothing gets no retry: the turn ends with the provider's error.
    engine.compactIfNeeded = async (_agent, trigger) => {
      engine.calls.push(trigger)
      return null
    }
    const agent = await turn(ctx, 'no-progress')
    expect(turnEnds(agent.session.events)).toEqual([
      { turn: 1, reason: 'error', steps: 4, errorCode: 'CONTEXT_WINDOW_EXCEEDED', error: '7 messages, the limit is 6' },
    ])
    expect(requests).toHaveLength(4)
    expect(engine.calls).toEqual(['pressure', 'pressure', 'pressure', 'pressure', 'context-overflow'])
    // One that replaces the head with something larger did rewrite the surface, but no retry either.
    engine.compactIfNeeded = ContractOnlyEngine.prototype.compactIfNeeded.bind(engine)
    engine.summaryText = 'x'.repeat(2000)
    const grown = await turn(ctx, 'grown')
    expect(grown.session.events.filter((event) => event.type === 'compaction/summary')).toHaveLength(1)
    expect(turnEnds(grown.session.events)).toEqual([
      { turn: 1, reason: 'error', steps: 4, errorCode: 'CONTEXT_WINDOW_EXCEEDED', error: '7 messages, the limit is 6' },
    ])
    assertClean()
  })

  it('stops calling an engine once it is unloaded, and calls the engine that replaces it', async () => {
    const { ctx, mount, assertClean } = await host()
    const first = mount(ContractOnlyEngine)
    await turn(ctx, 'first')
    const calls = first.engine.calls.length
    expect(calls).toBeGreaterThan(0)
    first.scope.dispose()
    expect(ctx.get('compaction')).toBeUndefined()
    const unloaded = await turn(ctx, 'unloaded')
    expect(first.engine.calls).toHaveLength(calls)
    // Nobody recovers the overflow now.
    expect(turnEnds(unloaded.session.events)[0]).toMatchObject({
      reason: 'error',
      errorCode: 'CONTEXT_WINDOW_EXCEEDED',
    })
    const second = mount(ContractOnlyEngine)
    const recovered = await turn(ctx, 'second')
    expect(turnEnds(recovered.session.events)).toEqual([{ turn: 1, reason: 'stop', steps: 6 }])
    expect(second.engine.calls).toContain('context-overflow')
    expect(first.engine.calls).toHaveLength(calls)
    assertClean()
  })

  it.each([
    ['config auto: false', ContractOnlyEngine, { auto: false }],
    ['static autoTrigger = false', SelfWiredEngine, undefined],
  ] as const)('wires nothing with %s', async (_label, engineClass, config) => {
    const { ctx, mount, assertClean } = await host(2)
    const { engine } = mount(engineClass, config)
    const agent = await turn(ctx, 'manual-only')
    expect(turnEnds(agent.session.events)).toEqual([{ turn: 1, reason: 'stop', steps: 3 }])
    expect(engine.calls).toEqual([])
    assertClean()
  })

  it('fails the step loudly, once per service, when the engine needs a service nobody mounted', async () => {
    const { ctx, mount, errors, warnings } = await host(2)
    const { engine } = mount(ContractOnlyEngine)
    const missing = new MissingServiceError(
      { service: 'tokenMeter', packageName: '@warmfold/token-meter', plugin: 'TokenMeter' },
      'ContractOnlyEngine',
    )
    engine.compactIfNeeded = async () => {
      throw missing
    }
    const first = await turn(ctx, 'first')
    const second = await turn(ctx, 'second')
    for (const agent of [first, second]) {
      expect(turnEnds(agent.session.events)).toEqual([
        { turn: 1, reason: 'error', steps: 1, errorCode: 'SERVICE_MISSING', error: missing.message },
      ])
    }
    expect(missing.message).toBe(
      'ContractOnlyEngine needs ctx.tokenMeter, which is not mounted in its Context: mount @warmfold/token-meter (ctx.plugin(TokenMeter)) in the same Context',
    )
    expect(errors).toEqual([missing])
    expect(warnings).toEqual([])
  })

  it('keeps the step going, with one warning per session and cause, when compaction fails otherwise', async () => {
    const { ctx, mount, errors, warnings } = await host(2)
    const { engine } = mount(ContractOnlyEngine)
    engine.compactIfNeeded = async () => {
      throw new Error('threshold above the window')
    }
    const agent = await turn(ctx, 'warned')
    expect(turnEnds(agent.session.events)).toEqual([{ turn: 1, reason: 'stop', steps: 3 }])
    expect(errors).toEqual([])
    expect(warnings).toEqual([
      'compaction of session warned failed; continuing the step (said once per session): threshold above the window',
    ])
  })
})
