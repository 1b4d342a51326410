import type { Context } from '@cordisjs/core'
import {
  createAssistantMessage,
  createMessage,
  createToolResultMessage,
  createUserMessage,
  textBlock,
  toolCallBlock,
} from '@warmfold/llm'
import type { Session } from '@warmfold/session'
import { SessionStore } from '@warmfold/session'
import type { TestContext } from '@warmfold/test-utils'
import { createTestContext } from '@warmfold/test-utils'
import { afterEach, describe, expect, it } from 'vitest'
import type { CompactionAgent, CompactionResult, CompactionTrigger, ManualCompactionAgent } from '../src/index.ts'
import {
  checkpointCompactionId,
  checkpointSource,
  CompactionEngine,
  CompactionInvariants,
  isCheckpointMessage,
  ManualCompactionError,
  toolPairingBalancedAfter,
  toolPairingBalancedBefore,
} from '../src/index.ts'

const ROUTE = { provider: 'p', model: 'm' }

/**
 * The smallest engine that keeps the contract: it "summarizes" by counting messages, and commits
 * the region as one bracketed transaction (start, summary, checkpoint replace, end).
 */
class TinyEngine extends CompactionEngine {
  static instances = 0
  /** Identifies the instance: services reach callers through per-Context proxies, so `toBe` cannot. */
  readonly instance = ++TinyEngine.instances
  readonly kind: string = 'tiny'
  readonly triggers: CompactionTrigger[] = []
  private counter = 0

  constructor(ctx: Context, config: unknown) {
    super(ctx, config)
  }

  async compactIfNeeded(_agent: CompactionAgent, trigger: CompactionTrigger): Promise<CompactionResult | null> {
    this.triggers.push(trigger)
    return null
  }

  async compactNow(agent: ManualCompactionAgent, signal?: AbortSignal): Promise<CompactionResult | null> {
    return agent.runMaintenance(async (taskSignal) => {
      if (signal?.aborted)
        throw new ManualCompactionError('cancelled', 'manual compaction was cancelled', { cause: signal.reason })
      const { nodes } = agent.session.surface
      // The largest balanced head that keeps the last node.
      for (let end = nodes.length - 2; end >= 0; end--) {
        if (toolPairingBalancedAfter(agent.session, nodes[end] as number))
          return this.compactRegion(0, end, agent, taskSignal)
      }
      return null
    })
  }

  async compactRegion(
    start: number,
    end: number,
    agent: CompactionAgent,
    _signal?: AbortSignal,
  ): Promise<CompactionResult> {
    const session = agent.session
    const nodes = session.surface.nodes
    if (!Number.isInteger(start) || !Number.isInteger(end) || start < 0 || end < start || end >= nodes.length) {
      throw new RangeError(`region ${start}..${end} is not on the surface (0..${nodes.length - 1})`)
    }
    if (
      !toolPairingBalancedBefore(session, nodes[start] as number) ||
      !toolPairingBalancedAfter(session, nodes[end] as number)
    ) {
      throw new RangeError(`region ${start}..${end} would separate a tool call from its result`)
    }
    const compactionId = `tiny-${++this.counter}`
    const shadowedSeqs = nodes.slice(start, end + 1)
    const summary = [textBlock(`${shadowedSeqs.length} messages happened.`)]
    const startEvent = session.append('compaction/start', { compactionId, turn: null, trigger: 'manual' })
    const summaryEvent = session.append('compaction/summary', {
      compactionId,
      summary,
      shadowedRange: { start, end },
      shadowedSeqs,
      shadowedTokenCount: shadowedSeqs.length * 10,
      provider: agent.options.provider,
      model: agent.options.model,
    })
    const message = createMessage({ role: 'user', content: summary, source: checkpointSource(compactionId) })
    const checkpointEvent = session.append(
      'user/message',
      { message },
      { op: 'replace', start, end, sourceEventSeqs: shadowedSeqs },
    )
    const endEvent = session.append('compaction/end', { compactionId, turn: null })
    return {
      compactionId,
      startSeq: startEvent.seq,
      summarySeq: summaryEvent.seq,
      checkpointSeq: checkpointEvent.seq,
      endSeq: endEvent.seq,
      summary,
      shadowedRange: { start, end },
      shadowedSeqs,
      shadowedTokenCount: shadowedSeqs.length * 10,
    }
  }
}

class OtherEngine extends TinyEngine {
  override readonly kind = 'other'
}

const contexts: TestContext[] = []

afterEach(async () => {
  for (const context of contexts.splice(0)) await context.dispose()
})

/** cordis reports a failed plugin apply asynchronously: let it land before checking. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 0))

async function context(): Promise<TestContext> {
  const created = await createTestContext()
  contexts.push(created)
  return created
}

/** Surface: 0 user, 1 assistant calling `call-1`, 2 its result, 3 assistant text, 4 user. */
function seed(session: Session): void {
  session.append('user/message', { message: createUserMessage('read a') }, 'append')
  session.append(
    'assistant/message',
    { message: createAssistantMessage([toolCallBlock('call-1', 'read', '{"path":"a"}')], ROUTE) },
    'append',
  )
  session.append('tool/result', { message: createToolResultMessage('call-1', 'A') }, 'append')
  session.append('assistant/message', { message: createAssistantMessage([textBlock('read it')], ROUTE) }, 'append')
  session.append('user/message', { message: createUserMessage('go on') }, 'append')
}

function agentOf(session: Session): ManualCompactionAgent & { maintenance: number } {
  return {
    session,
    options: ROUTE,
    maintenance: 0,
    async runMaintenance(task) {
      this.maintenance += 1
      return task(new AbortController().signal)
    },
  }
}

describe('CompactionEngine', () => {
  it('can be subclassed and mounted as ctx.compaction', async () => {
    const { ctx, assertClean } = await context()
    ctx.plugin(SessionStore, {})
    ctx.plugin(TinyEngine)
    const engine = ctx.get('compaction') as TinyEngine | undefined
    expect(engine?.triggers).toEqual([])
    expect((ctx.compaction as TinyEngine).instance).toBe(engine?.instance)
    const session = await ctx.sessions.create('s1')
    expect(await ctx.compaction.compactIfNeeded(agentOf(session), 'context-overflow')).toBeNull()
    expect(await ctx.compaction.compactIfNeeded(agentOf(session), 'pressure')).toBeNull()
    expect(engine?.triggers).toEqual(['context-overflow', 'pressure'])
    await settle()
    assertClean()
  })

  it('is what a plugin that injects compaction sees', async () => {
    const { ctx, assertClean } = await context()
    const seen: number[] = []
    ctx.plugin({
      name: 'consumer',
      inject: ['compaction'],
      apply: (inner: Context) => void seen.push((inner.compaction as TinyEngine).instance),
    })
    expect(seen).toEqual([])
    ctx.plugin(TinyEngine)
    expect(seen).toEqual([(ctx.get('compaction') as TinyEngine).instance])
    await settle()
    assertClean()
  })

  it('commits a region as one transaction the invariant checker accepts', async () => {
    const { ctx, assertClean } = await context()
    ctx.plugin(SessionStore, {})
    ctx.plugin(CompactionInvariants)
    ctx.plugin(TinyEngine)
    const session = await ctx.sessions.create('region')
    seed(session)
    const agent = agentOf(session)

    const length = session.length
    await expect(ctx.compaction.compactRegion(0, 1, agent)).rejects.toThrow(/would separate a tool call/)
    await expect(ctx.compaction.compactRegion(2, 1, agent)).rejects.toThrow(RangeError)
    expect(session.length).toBe(length)

    const result = await ctx.compaction.compactRegion(0, 3, agent)
    expect(result).toMatchObject({
      compactionId: 'tiny-1',
      startSeq: 5,
      summarySeq: 6,
      checkpointSeq: 7,
      endSeq: 8,
      shadowedSeqs: [0, 1, 2, 3],
      shadowedRange: { start: 0, end: 3 },
    })
    expect(session.surface.nodes).toEqual([7, 4])
    const [checkpoint] = session.deriveMessages()
    expect(isCheckpointMessage(checkpoint!)).toBe(true)
    expect(checkpointCompactionId(checkpoint!)).toBe('tiny-1')
    await settle()
    assertClean()
  })

  it('runs manual compaction through runMaintenance', async () => {
    const { ctx, assertClean } = await context()
    ctx.plugin(SessionStore, {})
    ctx.plugin(CompactionInvariants)
    ctx.plugin(TinyEngine)
    const session = await ctx.sessions.create('manual')
    seed(session)
    const agent = agentOf(session)
    const result = await ctx.compaction.compactNow(agent)
    expect(agent.maintenance).toBe(1)
    expect(result?.shadowedSeqs).toEqual([0, 1, 2, 3])
    const aborted = new AbortController()
    aborted.abort(new Error('user pressed escape'))
    const error = await ctx.compaction.compactNow(agent, aborted.signal).catch((caught: unknown) => caught)
    expect(ManualCompactionError.isInstance(error) && error.code).toBe('cancelled')
    await settle()
    assertClean()
  })

  it('refuses a second engine in the same Context with a recorded internal error', async () => {
    const { ctx, errors, warnings } = await context()
    ctx.plugin(TinyEngine)
    const first = (ctx.get('compaction') as TinyEngine).instance
    ctx.plugin(OtherEngine)
    await settle()
    expect(warnings).toEqual([])
    expect(errors).toHaveLength(1)
    expect(String(errors[0])).toMatch(/service compaction has been registered/)
    // Never `instanceof` a service: in cordis 3.18 a negative answer throws.
    expect((ctx.get('compaction') as TinyEngine).kind).toBe('tiny')
    expect((ctx.get('compaction') as TinyEngine).instance).toBe(first)
  })

  it('is removed when its plugin is disposed, and another engine can take its place', async () => {
    const { ctx, assertClean } = await context()
    const fork = ctx.plugin(TinyEngine)
    expect(ctx.get('compaction')).toBeDefined()
    fork.dispose()
    expect(ctx.get('compaction')).toBeUndefined()
    ctx.plugin(OtherEngine)
    expect((ctx.get('compaction') as TinyEngine).kind).toBe('other')
    await settle()
    assertClean()
  })
})
