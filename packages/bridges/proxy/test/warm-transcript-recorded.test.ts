import { describe, expect, it } from 'vitest'
import type { RememberedRequest } from '../src/index.ts'
import { WarmSummaryPlanner } from '../src/index.ts'
import { readAgentFixtures } from './agents/read-fixtures.ts'
import { HeldMemory, inbound, remembered, rewrittenBody } from './warm-support.ts'

/** The recorded pi and opencode runs (`test/fixtures/`), through the planner: each rewritten summary request. */
function rewrites(folder: string) {
  const planner = new WarmSummaryPlanner()
  const held: RememberedRequest[] = []
  const out: Array<{ confidence: number; last: string }> = []
  readAgentFixtures(folder).forEach(({ kind, request }, index) => {
    const json = request.json as Record<string, unknown>
    const at = Date.parse('2026-12-04T10:00:00Z') + index * 1000
    const plan = planner.plan(inbound('openai-chat', json, at, request.url), json, new HeldMemory(held))
    if (kind === 'conversation') held.push(remembered('openai-chat', json, at, request.url))
    if (kind !== 'summary') return
    const body = rewrittenBody(plan) as { messages: Array<{ content: unknown }> }
    if (plan.action !== 'rewrite') return
    out.push({ confidence: plan.recognition.confidence, last: JSON.stringify(body.messages.at(-1)?.content) })
  })
  return out
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
})
