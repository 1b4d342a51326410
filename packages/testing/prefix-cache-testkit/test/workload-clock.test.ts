import type { Message, TextBlock } from '@warmfold/llm'
import { describe, expect, it } from 'vitest'
import type { LatencyProfile } from '../src/index.ts'
import { fillerText, runWorkload, tokensOf } from '../src/index.ts'
import { minimumWorkloadSummaryTokens, workloadSummary } from '../src/workload-summary.ts'

// A small, quick workload: 9 steps over 3 turns at an 8k window (one fold or more).
const base = { window: 8000, steps: 9, turns: 3, profile: 'anthropic' } as const

// The first request of each later turn: the one whose last message is the new user message.
// Folds stay on the turn's path here: a background summary swapped in during the idle time would
// make that request a logged rewrite, and these tests are about what time alone does to the cache.
async function afterIdle(idleSeconds: number, latency?: LatencyProfile) {
  const run = await runWorkload({ ...base, idleSeconds, backgroundFold: false, ...(latency ? { latency } : {}) })
  return run.cache.observations.filter((_, index) => {
    const last = run.requests[index]?.messages.at(-1)
    return (
      last?.role === 'user' &&
      last.content[0]?.type === 'text' &&
      last.content[0].text === 'Go on with the next modules.'
    )
  })
}

describe('runWorkload turns, idle time and output tokens', () => {
  it('splits the steps across the user turns, each ending with a text answer', async () => {
    const run = await runWorkload(base)
    expect(run.completed).toBe(true)
    const ends = run.session.events
      .filter((event) => event.type === 'turn/end')
      .map((event) => (event.data as { reason: string }).reason)
    expect(ends).toEqual(['stop', 'stop', 'stop'])
    const users = run.session.events.filter((event) => event.type === 'user/message')
    expect(users).toHaveLength(3)
    const texts = run.session.events
      .filter((event) => event.type === 'assistant/message')
      .map((event) => (event.data as { message: Message }).message.content)
      .filter((content) => content.every((block) => block.type === 'text'))
      .map((content) => (content[0] as TextBlock).text)
    expect(texts).toEqual([
      'Modules 0 to 2 are read; 6 to go.',
      'Modules 0 to 5 are read; 3 to go.',
      'All 9 modules are read; the loader refactor plan is ready.',
    ])
  })

  it('counts the scripted output of every request, in request order', async () => {
    const run = await runWorkload({ ...base, turns: 1 })
    expect(run.outputTokens).toHaveLength(run.requests.length)
    let fold = 0
    run.requests.forEach((request, index) => {
      const output = run.outputTokens[index]
      // The i-th summary call writes fold i's realistic checkpoint, cut to the call's cap.
      if (request.purpose === 'compaction')
        expect(output).toBe(
          tokensOf(
            workloadSummary(fold, { maxTokens: Math.max(request.maxTokens!, minimumWorkloadSummaryTokens(fold++)) })
              .length,
          ),
        )
      else if (index === run.requests.length - 1)
        expect(output).toBe(tokensOf('All 9 modules are read; the loader refactor plan is ready.'.length))
      else expect(output).toBeGreaterThan(tokensOf(fillerText(0, run.workload.proseChars).length))
    })
  })

  it('expires cache entries on the virtual clock: idle time between turns counts', async () => {
    // Requests that take no time to speak of (a profile at the rate limits), so the gap between a
    // turn's last request and the next turn's first is the idle time: 299 s keeps it within the
    // anthropic profile's 300 s TTL (alive), 301 s goes past it.
    const instant = {
      name: 'instant',
      ttftMs: 0,
      prefillTokensPerSecond: 1e8,
      cachedTokensPerSecond: 1e8,
      decodeTokensPerSecond: 1e8,
    }
    const warm = await afterIdle(299, instant)
    const cold = await afterIdle(301, instant)
    expect(warm).toHaveLength(2)
    expect(cold).toHaveLength(2)
    for (const observation of warm) expect(observation.cachedTokens).toBeGreaterThan(0)
    for (const observation of cold) expect(observation.cachedTokens).toBe(0)
    // The miss is explained as an expiry, 301 s (and the last request's fraction of a millisecond) after the entry was last used.
    for (const observation of cold) {
      expect(observation.divergence).toMatchObject({ part: 'expired', offset: 0 })
      const { idleMs } = observation.divergence as { idleMs: number }
      expect(idleMs).toBeGreaterThanOrEqual(301_000)
      expect(idleMs).toBeLessThan(301_001)
    }
    for (const observation of warm) expect(observation.divergence.part).not.toBe('expired')
  })

  it("a request takes its modelled time: a turn's last answer under the default profile moves the clock past a TTL the idle time alone would keep", async () => {
    // The provider writes a request's prefix as it prefills it (by its first token); the answer's
    // decode after that, then 300 s of idle time, is past the anthropic profile's 300 s TTL.
    const cold = await afterIdle(300)
    expect(cold).toHaveLength(2)
    for (const observation of cold) {
      expect(observation.divergence).toMatchObject({ part: 'expired' })
      expect((observation.divergence as { idleMs: number }).idleMs).toBeGreaterThan(300_000)
    }
    // 299 s of idle time plus that decode is within it.
    for (const observation of await afterIdle(299)) expect(observation.cachedTokens).toBeGreaterThan(0)
  })
})
