import type { TestContext } from '@warmfold/test-utils'
import { createTestContext } from '@warmfold/test-utils'
import type { Exchange, WarmPlanner } from '../src/index.ts'
import { nullObserver, WarmfoldProxy } from '../src/index.ts'
import type { Script } from './forward-scripted-upstream.ts'
import { ScriptedUpstream } from './forward-scripted-upstream.ts'

/** A scripted upstream and a `WarmfoldProxy` in front of it, with every exchange the observer got. */
export interface ProxyHarness {
  readonly upstream: ScriptedUpstream
  readonly test: TestContext
  /** `http://127.0.0.1:<port>` of the proxy. */
  readonly url: string
  readonly exchanges: Exchange[]
  /** Resolves once the observer has `count` exchanges (it gets each after the answer ended). */
  observed(count: number): Promise<void>
  close(): Promise<void>
}

export async function startHarness(
  script: Script,
  config: Partial<WarmfoldProxy.Config> = {},
  planner?: WarmPlanner,
): Promise<ProxyHarness> {
  const upstream = await ScriptedUpstream.start(script)
  const test = await createTestContext()
  const exchanges: Exchange[] = []
  const waiters: Array<() => void> = []
  const observer = nullObserver((exchange) => {
    exchanges.push(exchange)
    for (const waiter of waiters.splice(0)) waiter()
  })
  test.ctx.plugin(WarmfoldProxy, {
    upstream: upstream.url,
    port: 0,
    observer,
    ...(planner ? { planner } : {}),
    ...config,
  })
  await test.ctx.lifecycle.flush()
  test.assertClean()
  const address = test.ctx.proxy.address
  if (!address) throw new Error('the proxy did not start')
  return {
    upstream,
    test,
    url: address.url,
    exchanges,
    async observed(count) {
      while (exchanges.length < count) await new Promise<void>((resolve) => waiters.push(resolve))
    },
    async close() {
      await test.dispose()
      await upstream.close()
      test.assertClean()
    },
  }
}

/** Raw headers without the ones that differ per hop or per target (host, connection, keep-alive). */
export function comparableHeaders(rawHeaders: readonly string[]): string[] {
  const kept: string[] = []
  for (let index = 0; index + 1 < rawHeaders.length; index += 2) {
    const name = (rawHeaders[index] as string).toLowerCase()
    if (name === 'host' || name === 'connection' || name === 'keep-alive') continue
    kept.push(`${rawHeaders[index]}: ${rawHeaders[index + 1]}`)
  }
  return kept
}
