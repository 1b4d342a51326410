import { describe, expect, it } from 'vitest'
import type { RememberedRequest } from '../src/index.ts'
import { RewrittenRequests } from '../src/warm/rewritten-requests.ts'

const replays = {} as RememberedRequest
const recognition = { agent: 'gemini-cli', confidence: 1, reason: 'test' }
const text = (value: string) => ({ role: 'user', parts: [{ text: value }] })

function summaryItems(index: number): unknown[] {
  return [text(`history ${index}`), { role: 'model', parts: [{ text: 'ok' }] }, text('summarize')]
}

function extend(index: number): unknown[] {
  return [...summaryItems(index), { role: 'model', parts: [] }, text('verify')]
}

describe('warm summaries: the bounded map of rewrites', () => {
  it('finds a rewrite from a call that extends its messages or its history, within the TTL only', () => {
    const map = new RewrittenRequests(4)
    map.remember({ api: 'gemini', json: { n: 1 }, replays, recognition, at: 0 }, summaryItems(1))
    const answer = { role: 'model', parts: [{ text: '<state_snapshot/>' }] }
    const history = [...summaryItems(1).slice(0, -1), answer, text('verify')]
    const whole = [...summaryItems(1), answer, text('verify')]
    expect(map.extended('gemini', history, 1_000, 300_000)?.json).toEqual({ n: 1 })
    expect(map.extended('gemini', whole, 1_000, 300_000)?.json).toEqual({ n: 1 })
    expect(map.extended('gemini', history, 300_001, 300_000)).toBeUndefined()
    expect(map.extended('openai-chat', history, 1_000, 300_000)).toBeUndefined()
    expect(
      map.extended('gemini', [...summaryItems(2).slice(0, -1), answer, text('verify')], 1, 300_000),
    ).toBeUndefined()
  })

  it('keeps at most its capacity, dropping the oldest first', () => {
    const map = new RewrittenRequests(2)
    for (let index = 0; index < 5; index++)
      map.remember({ api: 'gemini', json: { index }, replays, recognition, at: 0 }, summaryItems(index))
    expect(map.size).toBe(2)
    expect(map.extended('gemini', extend(0), 1, 1_000)).toBeUndefined()
    expect(map.extended('gemini', extend(4), 1, 1_000)?.json).toEqual({ index: 4 })
    expect(() => new RewrittenRequests(0)).toThrow('RewrittenRequests: capacity must be a positive integer, got 0')
  })
})
