import { describe, expect, it } from 'vitest'
import type { RememberedRequest, WarmPlan } from '../src/index.ts'
import { WarmSummaryPlanner } from '../src/index.ts'
import { readAgentFixtures } from './agents/read-fixtures.ts'
import { HeldMemory, inbound, remembered, rewrittenBody } from './warm-support.ts'

/** The recorded pi and opencode runs (`test/fixtures/`), through the planner: each summary request's plan. */
function summaryPlans(folder: string, planner = new WarmSummaryPlanner()): WarmPlan[] {
  const held: RememberedRequest[] = []
  const plans: WarmPlan[] = []
  readAgentFixtures(folder).forEach(({ kind, request }, index) => {
    const json = request.json as Record<string, unknown>
    const at = Date.parse('2026-12-04T10:00:00Z') + index * 1000
    const plan = planner.plan(inbound('openai-chat', json, at, request.url), json, new HeldMemory(held))
    if (kind === 'conversation') held.push(remembered('openai-chat', json, at, request.url))
    if (kind === 'summary') plans.push(plan)
  })
  return plans
}

/** A planner that weighs each rewrite at a cache read of `cacheRead`. */
const at = (cacheRead: number) => new WarmSummaryPlanner({ cacheRead })

/** The recorded pi and opencode runs, through the planner: each summary request, rewritten (else it fails naming why). */
function rewrites(folder: string) {
  return summaryPlans(folder).map((plan) => {
    const body = rewrittenBody(plan) as { messages: Array<{ content: unknown }> }
    const confidence = plan.action === 'rewrite' ? plan.recognition.confidence : 0
    return { confidence, last: JSON.stringify(body.messages.at(-1)?.content) }
  })
}

describe('warm summaries: the recorded transcript agents', () => {
  it("pi 0.73.1: its turn-prefix summary request is recognised by both markers, and nothing after the replay is 'since'", () => {
    const found = rewrites('pi-0.73.1')
    expect(found).toHaveLength(2)
    for (const { confidence, last } of found) {
      // The held conversation request holds every message the transcript has: the cut tool result's
      // "[... N more characters truncated]" note is the transcript's, not a later message.
      expect(last).not.toContain('<conversation_since>')
      expect(last).not.toContain('more characters truncated')
      expect(last).toContain('This is the PREFIX of a turn that was too large to keep.')
      expect(confidence).toBe(1)
    }
  })

  it('opencode 1.18.33: recognised by both markers; its transcript adds nothing after the replay', () => {
    const found = rewrites('opencode-1.18.33')
    expect(found).toHaveLength(1)
    expect(found[0]?.confidence).toBe(1)
    expect(found[0]?.last).not.toContain('<conversation_since>')
  })

  it('with a cache-read price (--price), each is rewritten only where the replay costs less: at 0.1×, pi’s is, opencode’s is not', () => {
    const pi = summaryPlans('pi-0.73.1', at(0.1))
    expect(pi.map((plan) => plan.action)).toEqual(['rewrite', 'rewrite'])
    for (const plan of pi)
      if (plan.action === 'rewrite')
        expect(plan.diff).toContainEqual(
          expect.stringMatching(/^at a cache read of 0\.1×: the rewrite [\d,]+ character-units/),
        )
    // opencode's transcript already leaves out its newest turn: reading its whole conversation
    // (68,622 characters) at 0.1× costs more than the transcript as written.
    const opencode = summaryPlans('opencode-1.18.33', at(0.1))
    expect(opencode).toHaveLength(1)
    expect(opencode[0]).toMatchObject({ action: 'forward', summary: { agent: 'opencode', confidence: 1 } })
    const reason = opencode[0]?.action === 'forward' ? opencode[0].reason : ''
    const [rewritten, written] = [...(reason ?? '').matchAll(/([\d,]+) character-units|as written ([\d,]+)/g)].map(
      (found) => Number((found[1] ?? found[2])!.replaceAll(',', '')),
    )
    expect(reason).toMatch(/the replay costs more, so the request is sent as written$/)
    expect(rewritten).toBeGreaterThan(written!)
    // Cheap enough reads make opencode's replay pay too; dear ones turn pi's down.
    expect(summaryPlans('opencode-1.18.33', at(0.05)).map((plan) => plan.action)).toEqual(['rewrite'])
    expect(summaryPlans('pi-0.73.1', at(0.2)).map((plan) => plan.action)).toEqual(['forward', 'forward'])
  })

  it('refuses a cache-read price that is not a finite number ≥ 0, naming it', () => {
    for (const cacheRead of [-0.1, Number.NaN, Number.POSITIVE_INFINITY])
      expect(() => new WarmSummaryPlanner({ cacheRead })).toThrow(
        `WarmSummaryPlanner: cacheRead must be a finite number ≥ 0, got ${String(cacheRead)}`,
      )
  })
})
