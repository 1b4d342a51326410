import { CompactionInvariantError, CompactionInvariants, pinMessage, unpinMessage } from '@warmfold/compaction'
import { canonicalJson, createToolResultMessage, isToolResultMessage } from '@warmfold/llm'
import type { AnySessionEvent, SessionEvent } from '@warmfold/session'
import { Session, SessionStore } from '@warmfold/session'
import type { TestContext } from '@warmfold/test-utils'
import { createTestContext } from '@warmfold/test-utils'
import { TokenMeter } from '@warmfold/token-meter'
import { afterEach, describe, expect, it } from 'vitest'
import { applyPrunePlan, planResultPrune, PRUNE_MARKER, ToolResultPruner } from '../src/index.ts'
import type { ResultSpec } from './pruner-fixtures.ts'
import { appendToolSession } from './pruner-fixtures.ts'

const contexts: TestContext[] = []
afterEach(async () => {
  for (const context of contexts.splice(0)) await context.dispose()
})

async function mount(config: Partial<ToolResultPruner.Config> = {}): Promise<TestContext> {
  const context = await createTestContext()
  contexts.push(context)
  context.ctx.plugin(TokenMeter, {})
  context.ctx.plugin(ToolResultPruner, config as ToolResultPruner.Config)
  return context
}

// Surface: user (0), then per result an assistant (1 + 2i) and its tool/result (2 + 2i), then a
// closing assistant. Over the default 8192 budget: results 1, 2 (two 5000-point text blocks
// around an image) and 4 (a failed call), at positions 4, 6 and 10.
const RESULTS: ResultSpec[] = [
  { size: 100 },
  { size: 20000 },
  { size: 5000, image: true },
  { size: 50 },
  { size: 12000, isError: true },
]

function scriptedSession(): Session {
  const session = new Session('pruner')
  appendToolSession(session, RESULTS)
  return session
}

/** Everything planSession must leave alone, as comparable values. */
function snapshot(session: Session) {
  return {
    length: session.length,
    replaceGeneration: session.surface.replaceGeneration,
    nodes: [...session.surface.nodes],
    messages: canonicalJson(session.deriveMessages()),
  }
}

describe('config', () => {
  it('loads with the defaults and waits for ctx.tokenMeter', async () => {
    const context = await createTestContext()
    contexts.push(context)
    context.ctx.plugin(ToolResultPruner, {} as ToolResultPruner.Config)
    expect(context.ctx.get('toolResultPruner')).toBeUndefined()
    context.ctx.plugin(TokenMeter, {})
    expect(context.ctx.toolResultPruner.config).toEqual({ thresholdChars: 8192, headChars: 4096, tailChars: 1024 })
    context.assertClean()
  })

  it('fails at load when head + marker + tail is over the threshold, naming the keys and values', async () => {
    const context = await mount({ thresholdChars: 100, headChars: 40, tailChars: 10 })
    expect(context.ctx.get('toolResultPruner')).toBeUndefined()
    expect(context.errors).toHaveLength(1)
    expect(String(context.errors[0])).toMatch(
      /ToolResultPruner config: headChars \(40\) \+ PRUNE_MARKER \(\d+ code points\) \+ tailChars \(10\) = \d+ must be <= thresholdChars \(100\)/,
    )
  })

  it('fails at load on an unknown key, a fraction or a zero threshold', async () => {
    for (const [config, message] of [
      [
        { thresholdChars: 8192, maxChars: 1 },
        /unknown key "maxChars"; known keys: thresholdChars, headChars, tailChars/,
      ],
      [{ headChars: 10.5 }, /headChars/],
      [{ thresholdChars: 0, headChars: 0, tailChars: 0 }, /thresholdChars/],
    ] as const) {
      const context = await mount(config as Partial<ToolResultPruner.Config>)
      expect(context.ctx.get('toolResultPruner')).toBeUndefined()
      expect(String(context.errors[0])).toMatch(message)
    }
  })
})

describe('planSession', () => {
  it('lists every over-budget tool result in surface order, priced by the token meter', async () => {
    const { ctx, assertClean } = await mount()
    const session = scriptedSession()
    const plan = ctx.toolResultPruner.planSession(session)
    expect(plan.map((entry) => entry.position)).toEqual([4, 6, 10])
    for (const entry of plan) {
      expect(entry.seq).toBe(session.surface.nodes[entry.position])
      expect(entry.original).toBe((session.eventAt(entry.seq) as SessionEvent<'tool/result'>).data.message)
      expect(entry.content).toEqual(ctx.toolResultPruner.pruneContent(entry.original.content[0].content))
      expect(entry.originalTokens).toBe(ctx.tokenMeter.estimateMessage(entry.original))
      const wouldBe = createToolResultMessage(entry.original.content[0].toolCallId, entry.content)
      expect(entry.prunedTokens).toBe(ctx.tokenMeter.estimateMessage(wouldBe))
      expect(entry.prunedTokens).toBeLessThan(entry.originalTokens)
    }
    expect(plan[1]!.content.map((block) => block.type)).toEqual(['text', 'image', 'text'])
    assertClean()
  })

  it('is pure: log length, replace generation and derived bytes are unchanged', async () => {
    const { ctx, assertClean } = await mount()
    const session = scriptedSession()
    const before = snapshot(session)
    const events = canonicalJson(session.events)
    const full = ctx.toolResultPruner.planSession(session)
    const some = ctx.toolResultPruner.planSession(session, new Set([full[0]!.seq]))
    const none = ctx.toolResultPruner.planSession(session, () => false)
    expect(snapshot(session)).toEqual(before)
    expect(canonicalJson(session.events)).toBe(events)
    expect([full.length, some.length, none.length]).toEqual([3, 1, 0])
    assertClean()
  })

  it('filters by seq with a set or a predicate', async () => {
    const { ctx, assertClean } = await mount()
    const session = scriptedSession()
    const seqs = ctx.toolResultPruner.planSession(session).map((entry) => entry.seq)
    const keep = new Set([seqs[0]!, seqs[2]!])
    expect(ctx.toolResultPruner.planSession(session, keep).map((entry) => entry.seq)).toEqual([seqs[0], seqs[2]])
    expect(ctx.toolResultPruner.planSession(session, (seq) => seq > seqs[0]!).map((entry) => entry.seq)).toEqual([
      seqs[1],
      seqs[2],
    ])
    assertClean()
  })
})

describe('planResultPrune and applyPrunePlan (one result, a budget of the caller)', () => {
  it('plan one result to any budget, skip what is not a tool result, pinned or within it, and land like pruneSession', async () => {
    const { ctx, assertClean } = await mount()
    const session = scriptedSession()
    const small = { thresholdChars: 1000, headChars: 600, tailChars: 100 }
    // Position 2 is a 100-point result, within even this budget; 1 is an assistant message; 8 is past a 50-point result.
    expect(planResultPrune(session, 2, small, ctx.tokenMeter)).toBeNull()
    expect(planResultPrune(session, 1, small, ctx.tokenMeter)).toBeNull()
    expect(planResultPrune(session, 99, small, ctx.tokenMeter)).toBeNull()
    const entry = planResultPrune(session, 10, small, ctx.tokenMeter)!
    expect(entry).toMatchObject({ seq: session.surface.nodes[10], position: 10 })
    expect(entry.replacement.content[0].isError).toBe(true)
    pinMessage(session, entry.seq)
    expect(planResultPrune(session, 10, small, ctx.tokenMeter)).toBeNull()
    unpinMessage(session, entry.seq)
    const result = applyPrunePlan(session, [entry])
    expect(result.entries).toEqual([
      {
        seq: entry.seq,
        pruneSeq: session.length - 2,
        replacementSeq: session.length - 1,
        position: 10,
        originalTokens: entry.originalTokens,
        prunedTokens: entry.prunedTokens,
      },
    ])
    expect(session.deriveMessages()[10]).toEqual(entry.replacement)
    expect(canonicalJson(entry.replacement.content)).toContain(JSON.stringify(PRUNE_MARKER).slice(1, -1))
    // A plan made before the surface changed is refused before it writes anything.
    const stale = planResultPrune(session, 4, small, ctx.tokenMeter)!
    applyPrunePlan(session, [stale])
    const length = session.length
    expect(() => applyPrunePlan(session, [stale])).toThrow(/no longer holds seq/)
    expect(session.length).toBe(length)
    assertClean()
  })
})

describe('pinned tool results', () => {
  it('are never planned or pruned, even when included, and stay byte for byte; unpinned they are pruned again', async () => {
    const { ctx, assertClean } = await mount()
    const session = scriptedSession()
    const [first, second, third] = ctx.toolResultPruner.planSession(session).map((entry) => entry.seq)
    pinMessage(session, second!)
    const pinnedBytes = canonicalJson(session.deriveMessages()[session.surface.nodes.indexOf(second!)])
    expect(ctx.toolResultPruner.planSession(session).map((entry) => entry.seq)).toEqual([first, third])
    expect(ctx.toolResultPruner.planSession(session, new Set([second!]))).toEqual([])
    const result = ctx.toolResultPruner.pruneSession(session)
    expect(result.entries.map((entry) => entry.seq)).toEqual([first, third])
    expect(session.surface.nodes).toContain(second)
    expect(canonicalJson(session.deriveMessages()[session.surface.nodes.indexOf(second!)])).toBe(pinnedBytes)
    expect(ctx.toolResultPruner.pruneSession(session).entries).toEqual([])
    unpinMessage(session, second!)
    expect(ctx.toolResultPruner.pruneSession(session).entries.map((entry) => entry.seq)).toEqual([second])
    assertClean()
  })
})

describe('pruneSession', () => {
  it('rewrites only included nodes, each right after its pricing event, without moving any position', async () => {
    const { ctx, assertClean } = await mount()
    const session = scriptedSession()
    const before = snapshot(session)
    const beforeMessages = session.deriveMessages().map((message) => canonicalJson(message))
    const originals = new Map(session.events.map((event) => [event.seq, canonicalJson(event)]))
    const measured = ctx.tokenMeter.measure(session).surfaceTokens
    const plan = ctx.toolResultPruner.planSession(session)
    const include = new Set([plan[1]!.seq, plan[2]!.seq])

    const result = ctx.toolResultPruner.pruneSession(session, include)

    expect(result.entries.map((entry) => entry.seq)).toEqual([plan[1]!.seq, plan[2]!.seq])
    expect(result.savedTokens).toBe(
      plan[1]!.originalTokens - plan[1]!.prunedTokens + plan[2]!.originalTokens - plan[2]!.prunedTokens,
    )
    expect(session.length).toBe(before.length + 4)
    expect(session.surface.replaceGeneration).toBe(before.replaceGeneration + 2)
    // 1-for-1 replaces: same node count, every position holds the same seq or its replacement.
    const rewritten = new Map(result.entries.map((entry) => [entry.position, entry.replacementSeq]))
    expect(session.surface.nodes).toEqual(before.nodes.map((seq, position) => rewritten.get(position) ?? seq))
    const afterMessages = session.deriveMessages().map((message) => canonicalJson(message))
    for (const [position, message] of afterMessages.entries()) {
      if (rewritten.has(position)) expect(message).not.toBe(beforeMessages[position])
      else expect(message).toBe(beforeMessages[position])
    }
    for (const [seq, json] of originals) expect(canonicalJson(session.eventAt(seq))).toBe(json)

    for (const [index, entry] of result.entries.entries()) {
      const planned = plan[index + 1]!
      expect(entry).toEqual({
        seq: planned.seq,
        position: planned.position,
        pruneSeq: entry.replacementSeq - 1,
        replacementSeq: entry.pruneSeq + 1,
        originalTokens: planned.originalTokens,
        prunedTokens: planned.prunedTokens,
      })
      const pricing = session.eventAt(entry.pruneSeq) as AnySessionEvent
      expect(pricing.type).toBe('compaction/prune')
      expect(pricing.data).toEqual({
        shadowedRange: { start: entry.position, end: entry.position },
        shadowedSeqs: [entry.seq],
        shadowedTokenCount: entry.originalTokens,
      })
      const replacement = session.eventAt(entry.replacementSeq) as SessionEvent<'tool/result'>
      const original = (session.eventAt(entry.seq) as SessionEvent<'tool/result'>).data
      expect(replacement.type).toBe('tool/result')
      expect(replacement.surface).toEqual({
        op: 'replace',
        start: entry.position,
        end: entry.position,
        sourceEventSeqs: [entry.seq],
      })
      const message = replacement.data.message
      expect(isToolResultMessage(message)).toBe(true)
      expect(message.id).not.toBe(original.message.id)
      expect(message.source).toEqual(original.message.source)
      expect(message.content[0]).toEqual({ ...original.message.content[0], content: planned.content })
      expect(replacement.data).toEqual({
        message,
        toolName: original.toolName,
        turn: original.turn,
        step: original.step,
      })
      expect(ctx.tokenMeter.estimateMessage(message)).toBe(entry.prunedTokens)
    }
    const failed = session.eventAt(result.entries[1]!.replacementSeq) as SessionEvent<'tool/result'>
    expect(failed.data.message.content[0].isError).toBe(true)
    expect(
      failed.data.message.content[0].content.some(
        (block) => block.type === 'text' && block.text.includes(PRUNE_MARKER),
      ),
    ).toBe(true)
    expect(ctx.tokenMeter.measure(session).surfaceTokens).toBe(measured - result.savedTokens)

    const again = snapshot(session)
    expect(ctx.toolResultPruner.pruneSession(session, include)).toEqual({ entries: [], savedTokens: 0 })
    expect(snapshot(session)).toEqual(again)
    // The excluded result is still there for a later pass; after it, nothing is left.
    expect(ctx.toolResultPruner.pruneSession(session).entries.map((entry) => entry.seq)).toEqual([plan[0]!.seq])
    expect(ctx.toolResultPruner.pruneSession(session).entries).toEqual([])
    assertClean()
  })

  it('passes the compaction invariant checker (adjacency and shadowed seqs)', async () => {
    const context = await mount()
    const { ctx } = context
    ctx.plugin(SessionStore, {})
    ctx.plugin(CompactionInvariants)
    const session = await ctx.sessions.create('guarded')
    appendToolSession(session, RESULTS)
    const [first] = ctx.toolResultPruner.planSession(session)
    // The checker is live: a replacement without its pricing event is rejected.
    expect(() =>
      session.append(
        'tool/result',
        { message: createToolResultMessage('call-1', 'short') },
        { op: 'replace', start: first!.position, end: first!.position, sourceEventSeqs: [first!.seq] },
      ),
    ).toThrow(CompactionInvariantError)
    const result = ctx.toolResultPruner.pruneSession(session)
    expect(result.entries).toHaveLength(3)
    expect(ctx.toolResultPruner.pruneSession(session).entries).toHaveLength(0)
    context.assertClean()
  })

  it('writes nothing when no result is over budget', async () => {
    const { ctx, assertClean } = await mount()
    const session = new Session('small')
    appendToolSession(session, [{ size: 10 }, { size: 8192 }])
    const before = snapshot(session)
    expect(ctx.toolResultPruner.planSession(session)).toEqual([])
    expect(ctx.toolResultPruner.pruneSession(session)).toEqual({ entries: [], savedTokens: 0 })
    expect(snapshot(session)).toEqual(before)
    assertClean()
  })
})
