import type { Message, TextBlock } from '@warmfold/llm'
import { describe, expect, it } from 'vitest'
import { fillerText, runWorkload, tokensOf, WORKLOAD_SUMMARY } from '../src/index.ts'

// A small, quick workload: 9 steps over 3 turns at an 8k window (one fold or more).
const base = { window: 8000, steps: 9, turns: 3, profile: 'anthropic' } as const

// The first request of each later turn: the one whose last message is the new user message.
async function afterIdle(idleSeconds: number) {
  const run = await runWorkload({ ...base, idleSeconds })
  return run.cache.observations.filter((_, index) => {
    const last = run.requests[index]?.messages.at(-1)
    return last?.role === 'user' && last.content[0]?.type === 'text' && last.content[0].text === 'Go on with the next modules.'
  })
}

describe('runWorkload turns, idle time and output tokens', () => {
  it('splits the steps across the user turns, each ending with a text answer', async () => {
    const run = await runWorkload(base)
    expect(run.completed).toBe(true)
    const ends = run.session.events.filter((event) => event.type === 'turn/end').map((event) => (event.data as { reason: string }).reason)
    expect(ends).toEqual(['stop', 'stop', 'stop'])
    const users = run.session.events.filter((event) => event.type === 'user/message')
    expect(users).toHaveLength(3)
    const texts = run.session.events
      .filter((event) => event.type === 'assistant/message')
      .map((event) => (event.data as { message: Message }).message.content)
      .filter((content) => content.every((block) => block.type === 'text'))
      .map((content) => (content[0] as TextBlock).text)
    expect(texts).toEqual(['Modules 0 to 2 are read; 6 to go.', 'Modules 0 to 5 are read; 3 to go.', 'All 9 modules are read; the loader refactor plan is ready.'])
  })

  it('counts the scripted output of every request, in request order', async () => {
    const run = await runWorkload({ ...base, turns: 1 })
    expect(run.outputTokens).toHaveLength(run.requests.length)
    run.requests.forEach((request, index) => {
      const output = run.outputTokens[index]
      if (request.purpose === 'compaction') expect(output).toBe(tokensOf(WORKLOAD_SUMMARY.length))
      else if (index === run.requests.length - 1) expect(output).toBe(tokensOf('All 9 modules are read; the loader refactor plan is ready.'.length))
      else expect(output).toBeGreaterThan(tokensOf(fillerText(0, run.workload.proseChars).length))
    })
  })

  it('expires cache entries on the virtual clock: idle time between turns counts, step time too', async () => {
    // The last request of a turn is followed by one step (15 s) and the idle time: 285 s keeps the
    // gap at the anthropic profile's 300 s TTL (alive), 286 s goes past it.
    const warm = await afterIdle(285)
    const cold = await afterIdle(286)
    expect(warm).toHaveLength(2)
    expect(cold).toHaveLength(2)
    for (const observation of warm) expect(observation.cachedTokens).toBeGreaterThan(0)
    for (const observation of cold) expect(observation.cachedTokens).toBe(0)
    // The miss is explained as an expiry, 301 s after the entry was last used.
    for (const observation of cold) expect(observation.divergence).toMatchObject({ part: 'expired', offset: 0, idleMs: 301_000 })
    for (const observation of warm) expect(observation.divergence.part).not.toBe('expired')
  })
})
