import { canonicalJson } from '@warmfold/llm'
import { PromptRenderer } from '@warmfold/cache-ledger/prefix'
import { describe, expect, it } from 'vitest'
import { COMPACTION_INSTRUCTION } from '@warmfold/compaction-basic'
import type { WorkloadRun } from '../src/index.ts'
import { assertNoSilentRewrite, hitRatio, runWorkload } from '../src/index.ts'
import { uncachedTokens } from '../src/cache-assertions.ts'

/**
 * The bounds every warm summary call must meet. The token bounds alone are loose (a rewritten
 * region node or an extra message after the instruction costs far less than 2,000 tokens), so
 * the first divergence must be exactly the trailing instruction: its first block, the last
 * message of the request.
 */
function expectWarmSummaries(run: WorkloadRun, minimumCalls = 1): void {
  expect(run.completed).toBe(true)
  expect(run.summaryCalls.length).toBeGreaterThanOrEqual(minimumCalls)
  const requests = summaryRequests(run)
  expect(requests).toHaveLength(run.summaryCalls.length)
  run.summaryCalls.forEach((call, position) => {
    expect(hitRatio(call), `summary call ${call.index}: ${JSON.stringify(call.divergence)}`).toBeGreaterThanOrEqual(
      0.95,
    )
    expect(uncachedTokens(call)).toBeLessThanOrEqual(2000)
    const messages = requests[position]!.messages
    expect(call.divergence, `summary call ${call.index} must first differ at its trailing instruction`).toMatchObject({
      part: 'message',
      index: messages.length - 1,
      blockIndex: 0,
    })
    expect(messages.at(-1)!.content).toEqual([{ type: 'text', text: COMPACTION_INSTRUCTION }])
  })
}

function summaryRequests(run: WorkloadRun) {
  return run.requests.filter((request) => request.purpose === 'compaction')
}

describe('regression specs: compaction keeps the prefix cache warm', () => {
  it('1. the summary call replays the routed effort, temperature and stop, and every summary call is warm', async () => {
    const run = await runWorkload({
      window: 32000,
      effort: 'max',
      temperature: 0.2,
      stop: ['</answer>'],
      pruner: 'none',
    })
    expectWarmSummaries(run)
    for (const request of summaryRequests(run)) {
      expect(request).toMatchObject({ reasoningEffort: 'max', temperature: 0.2, stop: ['</answer>'] })
    }
  })

  it('2. with the rewrite-only pruner, the prune pass does not rewrite the replayed region', async () => {
    const run = await runWorkload({ window: 32000, pruner: 'rewrite-only' })
    expectWarmSummaries(run)
    expect(run.session.events.filter((event) => event.type === 'compaction/prune').length).toBeGreaterThan(0)
  })

  it('3. no silent rewrite over a whole run, and the first request after each checkpoint reuses tools + system', async () => {
    const run = await runWorkload({ window: 32000, effort: 'max', pruner: 'rewrite-only' })
    // Not vacuous: the run compacted, so conversation requests broke the prefix and each break
    // needed a logged rewrite to explain it.
    expect(run.completed).toBe(true)
    expect(run.summaryCalls.length).toBeGreaterThanOrEqual(1)
    expect(run.session.events.filter((event) => event.type === 'compaction/summary')).toHaveLength(
      run.summaryCalls.length,
    )
    // A checkpoint swapped in after the last request (a background summary in hand once the turn
    // had ended) breaks nothing yet: count those a later request was sent after.
    const lastSentAt = Math.max(...run.sentAtSeq.filter((_, index) => run.requests[index]?.purpose === 'conversation'))
    const followed = run.session.events.filter(
      (event) => event.type === 'compaction/summary' && event.seq < lastSentAt,
    ).length
    expect(followed).toBeGreaterThanOrEqual(1)
    expect(
      run.conversation.slice(1).filter((observation) => !observation.extendsPrevious).length,
    ).toBeGreaterThanOrEqual(followed)
    expect(run.silentRewrites).toBe(0)
    assertNoSilentRewrite(run)
    // Only durable rewrites explain a break: a noted rewrite is a logged event of that very type.
    for (const observation of run.conversation) {
      for (const rewrite of observation.rewritesSince) {
        expect(['compaction/summary', 'compaction/prune', 'request/header']).toContain(rewrite.type)
        expect(run.session.events[rewrite.seq]?.type, `rewrite noted before request ${observation.index}`).toBe(
          rewrite.type,
        )
      }
    }
    const renderer = new PromptRenderer(canonicalJson)
    const conversation = run.requests.filter((request) => request.purpose === 'conversation')
    const afterCheckpoint = run.conversation.filter((observation) =>
      observation.rewritesSince.some((rewrite) => rewrite.type === 'compaction/summary'),
    )
    expect(afterCheckpoint.length).toBe(followed)
    for (const observation of afterCheckpoint) {
      const request = conversation[run.conversation.indexOf(observation)]!
      const layout = renderer.layout(request)
      const headChars = layout.offsets[layout.headSegments]!
      expect(observation.matchedChars).toBeGreaterThanOrEqual(headChars)
      // The break is in the messages (the new checkpoint), never in the static head.
      expect(observation.divergence).toMatchObject({ part: 'message' })
    }
  })

  it.each([32000, 128000, 512000])(
    '4. window %i: at least two warm summary calls and no silent rewrite',
    async (window) => {
      const run = await runWorkload({ window })
      expectWarmSummaries(run, 2)
      expect(run.silentRewrites).toBe(0)
    },
  )

  it.each(['blocks:16', 'blocks:128:1024', 'anthropic'])('5. profile %s: the same bounds hold', async (profile) => {
    const run = await runWorkload({ window: 128000, profile })
    expectWarmSummaries(run, 2)
    expect(run.silentRewrites).toBe(0)
  })

  it.each(['legacy', 'cold'] as const)(
    '6. the reference strategy %s really misses, so the comparison is meaningful',
    async (strategy) => {
      const run = await runWorkload({ window: 128000, strategy })
      expect(run.completed).toBe(true)
      expect(run.summaryCalls.length).toBeGreaterThanOrEqual(2)
      for (const call of run.summaryCalls) expect(hitRatio(call)).toBeLessThan(0.2)
      const warm = await runWorkload({ window: 128000 })
      expect(warm.totals.uncachedTokens).toBeLessThan(run.totals.uncachedTokens * 0.7)
    },
  )
})
