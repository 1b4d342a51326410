import { createHash } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { RequestApi } from '@warmfold/cache-ledger/prefix'
import { createTestContext } from '@warmfold/test-utils'
import { expect } from 'vitest'
import type { Exchange, WarmMode } from '../../src/index.ts'
import { ProxyObserver, WarmfoldProxy, WarmSummaryPlanner } from '../../src/index.ts'
import type { ProxyLogLine } from '../support/observe-log-lines.ts'
import { readProxyLog } from '../support/observe-log-lines.ts'
import type { PrefixShare } from './prefix-share.ts'
import { summaryPrefixShares } from './prefix-share.ts'
import type { AgentRun, AgentSpec } from './run-agent.ts'
import { runAgent } from './run-agent.ts'
import type { ClassifiedRequest } from './scripted-agent-server.ts'
import { FINAL_TEXT } from './task.ts'

/**
 * The real observer, as the plugin builds it by default (its log, its own recognising planner),
 * with a tap: every exchange it is handed, so a test sees the request bytes exactly as the proxy
 * received them from the agent (`InboundRequest.body`) beside what it sent upstream.
 */
class TappedObserver extends ProxyObserver {
  readonly exchanges: Exchange[] = []
  override observe(exchange: Exchange): void {
    this.exchanges.push(exchange)
    super.observe(exchange)
  }
}

/** One agent run through a `WarmfoldProxy` in front of the scripted upstream. */
export interface ProxiedRun {
  readonly mode: WarmMode
  readonly run: AgentRun
  /** Every exchange the proxy handed its observer (in the order answers ended). */
  readonly exchanges: readonly Exchange[]
  /** The proxy log's lines. */
  readonly log: readonly ProxyLogLine[]
  /** Events the proxy emitted: `proxy/part-error`, `proxy/fail-open`. */
  readonly incidents: readonly string[]
}

/**
 * Runs `spec` once through a real `WarmfoldProxy` (a cordis context, port 0, `warmSummaries:
 * mode`, the default planner, the real observer logging to a temp file), then stops the proxy and
 * reads its log.
 */
export async function runThroughProxy(spec: AgentSpec, mode: WarmMode): Promise<ProxiedRun> {
  const dir = mkdtempSync(join(tmpdir(), `warmfold-proxy-${spec.name}-`))
  const log = join(dir, 'proxy.jsonl')
  const test = await createTestContext()
  const incidents: string[] = []
  test.ctx.on('proxy/part-error', (part, error) => void incidents.push(`part-error ${part}: ${String(error)}`))
  test.ctx.on('proxy/fail-open', (request, reason) => void incidents.push(`fail-open ${request.id}: ${reason}`))
  const observer = new TappedObserver({ log, recognize: new WarmSummaryPlanner() })
  try {
    const run = await runAgent(spec, {
      baseUrl: async (upstream) => {
        test.ctx.plugin(WarmfoldProxy, { upstream, port: 0, warmSummaries: mode, observer })
        await test.ctx.lifecycle.flush()
        test.assertClean()
        const address = test.ctx.proxy.address
        if (!address) throw new Error('the proxy did not start')
        return address.url
      },
    })
    await test.dispose()
    test.assertClean()
    return { mode, run, exchanges: observer.exchanges, log: await readProxyLog(log), incidents }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

const sha256 = (bytes: Buffer | string): string => createHash('sha256').update(bytes).digest('hex')

/** The agent finished its task normally. */
export function expectFinished(proxied: ProxiedRun): void {
  const { run } = proxied
  const context = `${proxied.mode}: exit ${run.exitCode}, stderr: ${run.stderr.slice(-1500)}`
  expect(run.timedOut, context).toBe(false)
  expect(run.exitCode, context).toBe(0)
  expect(run.stdout, context).toContain(FINAL_TEXT)
  expect(proxied.incidents, proxied.mode).toEqual([])
}

/** What the proxy did with one upstream request. */
export interface Passage {
  readonly upstream: ClassifiedRequest
  readonly exchange: Exchange
  readonly line: ProxyLogLine
  /** The upstream got other bytes than the agent sent (a rewrite). */
  readonly rewritten: boolean
}

/**
 * Pairs each request the upstream got with the exchange that sent it (the bytes sent upstream, by
 * digest) and its log line (by id), and checks: one upstream request per exchange (no fail-open),
 * the same path and query, and every request the proxy did not rewrite reached the upstream with
 * exactly the bytes the agent sent; the log's digest is of what went upstream.
 */
export function passagesOf(proxied: ProxiedRun): Passage[] {
  const pool = [...proxied.exchanges]
  expect(pool.length, `${proxied.mode}: exchanges vs upstream requests`).toBe(proxied.run.requests.length)
  return proxied.run.requests.map((upstream) => {
    const bytes = Buffer.from(upstream.request.body, 'utf8')
    const at = pool.findIndex(
      (exchange) => exchange.sent.equals(bytes) && exchange.request.url === upstream.request.url,
    )
    const what = `${proxied.mode}: upstream request ${upstream.index} (${upstream.kind}, ${upstream.request.url})`
    expect(at, `${what} was sent by no exchange`).toBeGreaterThanOrEqual(0)
    const exchange = pool.splice(at, 1)[0] as Exchange
    expect(exchange.failOpen, what).toBeUndefined()
    const rewritten = !exchange.request.body.equals(bytes)
    if (rewritten) expect(exchange.plan?.action, what).toBe('rewrite')
    const line = proxied.log.find((entry) => entry.warmfold.id === exchange.request.id)
    expect(line, `${what}: no log line`).toBeDefined()
    expect(line?.warmfold.bodySha256, what).toBe(sha256(bytes))
    return { upstream, exchange, line: line as ProxyLogLine, rewritten }
  })
}

/**
 * The checks every proxied run shares: the task finished; every request but a rewritten summary
 * reached the upstream byte for byte as the agent sent it; only summary requests were rewritten,
 * each logged as a compaction, and every summary request was (in both modes). Returns the summary
 * requests' prefix shares of the conversation request before each, as the upstream got them.
 */
export function expectPassedThrough(
  proxied: ProxiedRun,
  api: RequestApi,
  summaries: 'rewritten' | 'untouched',
): { passages: Passage[]; shares: PrefixShare[] } {
  expectFinished(proxied)
  const passages = passagesOf(proxied)
  const summaryPassages = passages.filter((passage) => passage.upstream.kind === 'summary')
  expect(summaryPassages.length, proxied.mode).toBeGreaterThan(0)
  for (const passage of passages) {
    const what = `${proxied.mode}: request ${passage.upstream.index} (${passage.upstream.kind})`
    const expected = passage.upstream.kind === 'summary' && proxied.mode === 'on' && summaries === 'rewritten'
    expect(passage.rewritten, what).toBe(expected)
    expect(passage.line.warmfold.kind === 'compaction', what).toBe(passage.upstream.kind === 'summary')
  }
  return { passages, shares: summaryPrefixShares(proxied.run.requests, api) }
}

/** One line of the README's before/after table for a run's summary requests. */
export function describeShares(proxied: ProxiedRun, shares: readonly PrefixShare[]): string {
  return shares
    .map(
      (share) =>
        `${proxied.mode}: summary ${share.summary} vs conversation ${share.previous}: ${share.sharedChars} of ` +
        `${share.previousChars} chars repeated (${(share.share * 100).toFixed(2)} %, ≈ ${Math.round(share.sharedChars / 4)} ` +
        `tokens), summary ${share.summaryChars} chars, uncached ${share.summaryChars - share.sharedChars} chars ` +
        `(≈ ${Math.round((share.summaryChars - share.sharedChars) / 4)} tokens)`,
    )
    .join('\n')
}
