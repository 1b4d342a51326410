import { afterEach, describe, expect, it, vi } from 'vitest'
import { REAL_TIME_CLOCK } from '../src/index.ts'
import { MAX_TIMER_DELAY_MS } from '../src/engine-clock.ts'

afterEach(() => {
  vi.useRealTimers()
})

describe('REAL_TIME_CLOCK', () => {
  it('waits out a delay beyond the 2³¹ − 1 ms Node honours instead of firing after 1 ms', async () => {
    vi.useFakeTimers()
    const fired: number[] = []
    const delay = MAX_TIMER_DELAY_MS + 3 * 24 * 60 * 60 * 1000
    REAL_TIME_CLOCK.setTimeout(async () => void fired.push(Date.now()), delay)
    const start = Date.now()
    await vi.advanceTimersByTimeAsync(60_000)
    expect(fired).toEqual([])
    await vi.advanceTimersByTimeAsync(MAX_TIMER_DELAY_MS)
    expect(fired).toEqual([])
    await vi.advanceTimersByTimeAsync(delay - MAX_TIMER_DELAY_MS - 60_000)
    expect(fired).toEqual([start + delay])
  })

  it('cancels a chained wait in its second leg', async () => {
    vi.useFakeTimers()
    const fired: number[] = []
    const cancel = REAL_TIME_CLOCK.setTimeout(async () => void fired.push(Date.now()), MAX_TIMER_DELAY_MS + 1000)
    await vi.advanceTimersByTimeAsync(MAX_TIMER_DELAY_MS + 10)
    cancel()
    await vi.advanceTimersByTimeAsync(5000)
    expect(fired).toEqual([])
  })
})
