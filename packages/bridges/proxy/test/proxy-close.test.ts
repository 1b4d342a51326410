import { Context } from '@cordisjs/core'
import { describe, expect, it } from 'vitest'
import { nullObserver, WarmfoldProxy } from '../src/index.ts'

describe('WarmfoldProxy.close()', () => {
  it('is the stop’s own close, awaited: after ctx.stop() it resolves only once the observer has closed, which it does once', async () => {
    let closes = 0
    let finish!: () => void
    const observerClosed = new Promise<void>((resolve) => (finish = resolve))
    const observer = { ...nullObserver(), snapshot: () => ({ closes }), close: () => (closes++, observerClosed) }
    const ctx = new Context()
    await ctx.start()
    ctx.plugin(WarmfoldProxy, { upstream: 'http://127.0.0.1:9', port: 0, observer })
    await ctx.lifecycle.flush()
    const proxy = ctx.proxy
    expect(proxy.address).toBeDefined()
    await ctx.stop()
    let resolved = false
    const closing = proxy.close().then(() => (resolved = true))
    // The server's close and the observer's close have both been asked for; the latter has not finished.
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(resolved).toBe(false)
    expect(proxy.address).toBeUndefined()
    finish()
    await closing
    expect(resolved).toBe(true)
    expect(closes).toBe(1)
    expect(proxy.snapshot()).toEqual({ closes: 1 })
  })
})
