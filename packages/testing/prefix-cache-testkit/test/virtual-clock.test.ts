import { describe, expect, it } from 'vitest'
import { PrefixCache } from '../src/index.ts'
import { VirtualClock } from '../src/virtual-clock.ts'

/** A clock on a fresh simulator, and the simulator (its `now` is the clock's). */
function virtualClock(): { clock: VirtualClock; cache: PrefixCache; start: number } {
  const cache = new PrefixCache('bytes')
  return { clock: new VirtualClock(cache), cache, start: cache.now }
}

/** A promise that never settles (a summary call that never answers). */
const never = () => new Promise<void>(() => {})

describe('VirtualClock', () => {
  it('fires timers only when time is moved on, in due order, each at its due time; a cancelled one never', async () => {
    const { clock, start } = virtualClock()
    const fired: Array<[string, number]> = []
    clock.setTimeout(async () => void fired.push(['b', clock.now() - start]), 2000)
    const cancel = clock.setTimeout(async () => void fired.push(['cancelled', clock.now() - start]), 1500)
    clock.setTimeout(async () => void fired.push(['a', clock.now() - start]), 1000)
    cancel()
    await new Promise((resolve) => setImmediate(resolve))
    expect(fired).toEqual([])
    await clock.advance(1999)
    expect(fired).toEqual([['a', 1000]])
    expect(clock.now() - start).toBe(1999)
    await clock.advance(1)
    expect(fired).toEqual([
      ['a', 1000],
      ['b', 2000],
    ])
    // A cancel after the timer fired is a no-op.
    cancel()
    await clock.advance(10_000)
    expect(fired).toHaveLength(2)
  })

  it('sleep resolves when the clock reaches now + ms', async () => {
    const { clock, start } = virtualClock()
    let woke = -1
    void clock.sleep(500).then(() => (woke = clock.now() - start))
    await clock.advance(499)
    expect(woke).toBe(-1)
    await clock.advance(1)
    expect(woke).toBe(500)
  })

  it('wait: work that settles on a timer before the deadline ends the wait there (true), time moved exactly that far', async () => {
    const { clock, start } = virtualClock()
    let laterAt = -1
    clock.setTimeout(async () => void (laterAt = clock.now() - start), 9000)
    expect(await clock.wait(clock.sleep(3000), 10_000)).toBe(true)
    expect(clock.now() - start).toBe(3000)
    // A timer after the work's was not fired on the way; it fires at its own time.
    expect(laterAt).toBe(-1)
    await clock.advance(6000)
    expect(laterAt).toBe(9000)
  })

  it('wait: work that settles exactly at the deadline counts as settled', async () => {
    const { clock, start } = virtualClock()
    expect(await clock.wait(clock.sleep(10_000), 10_000)).toBe(true)
    expect(clock.now() - start).toBe(10_000)
  })

  it('wait past a deadline: false, time moved exactly to the deadline; the work goes on and settles at its own time', async () => {
    const { clock, start } = virtualClock()
    let settledAt = -1
    const work = clock.sleep(25_000).then(() => (settledAt = clock.now() - start))
    // Timers due up to the deadline fire on the way (one exactly at it, which settles nothing);
    // the one past it does not.
    const fired: number[] = []
    clock.setTimeout(async () => void fired.push(clock.now() - start), 4000)
    clock.setTimeout(async () => void fired.push(clock.now() - start), 10_000)
    clock.setTimeout(async () => void fired.push(clock.now() - start), 10_001)
    expect(await clock.wait(work, 10_000)).toBe(false)
    expect(clock.now() - start).toBe(10_000)
    expect(fired).toEqual([4000, 10_000])
    expect(settledAt).toBe(-1)
    await clock.advance(15_000)
    expect(fired).toEqual([4000, 10_000, 10_001])
    expect(settledAt).toBe(25_000)
  })

  it('wait on work nothing virtual will settle: false at the deadline (the rest of the wait passes at once)', async () => {
    const { clock, start } = virtualClock()
    expect(await clock.wait(never(), 7000)).toBe(false)
    expect(clock.now() - start).toBe(7000)
  })

  it('wait on work that settles without the clock (real I/O) ends without moving time', async () => {
    const { clock, start } = virtualClock()
    const work = new Promise<void>((resolve) => setImmediate(resolve))
    expect(await clock.wait(work, 60_000)).toBe(true)
    expect(clock.now() - start).toBe(0)
  })

  it('wait with an infinite maxMs fires timers until the work settles', async () => {
    const { clock, start } = virtualClock()
    expect(await clock.wait(clock.sleep(123_456), Number.POSITIVE_INFINITY)).toBe(true)
    expect(clock.now() - start).toBe(123_456)
  })

  it("advance with an agent waits for it to be idle after each timer and at the end (an idle fold's swap lands first)", async () => {
    const { clock } = virtualClock()
    const order: string[] = []
    let busyUntil: Promise<void> = Promise.resolve()
    const agent = {
      whenIdle: () => busyUntil.then(() => void order.push('idle')),
    }
    clock.setTimeout(async () => {
      order.push('timer')
      // The timer starts maintenance that ends on a later turn of the event loop.
      busyUntil = new Promise((resolve) => setImmediate(() => (order.push('maintenance done'), resolve())))
    }, 100)
    await clock.advance(1000, agent)
    expect(order).toEqual(['timer', 'maintenance done', 'idle', 'idle'])
  })
})
