import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { RequestApi } from '@warmfold/cache-ledger/prefix'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Exchange, InboundRequest, WarmPlan } from '../src/index.ts'
import { ProxyObserver, routeOf, WarmSummaryPlanner } from '../src/index.ts'
import { readAgentFixtures } from './agents/read-fixtures.ts'
import { readProxyLog } from './support/observe-log-lines.ts'
import { prefixShare } from './warm-support.ts'

/**
 * The real agents' recorded runs (`test/fixtures/`) replayed through the real observer and the
 * real planner, as `WarmfoldProxy` wires them: the planner asks the observer's memory
 * (`lastConversationFor`), the observer gets each exchange after it. Where the warm room's own
 * tests hold the history in a test memory, this holds it where the proxy does.
 */
const COLD = ['codex-0.171.0', 'qwen-code-cold-0.24.4', 'gemini-cli-0.61.0', 'pi-0.73.1', 'opencode-1.18.33']
const ALREADY_WARM = ['qwen-code-0.24.4', 'claude-code-2.1.332']

let directory: string
beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'warmfold-observe-agents-'))
})
afterAll(() => rm(directory, { recursive: true, force: true }))

interface Replayed {
  readonly kind: string
  readonly request: InboundRequest
  readonly json: Record<string, unknown>
  readonly plan: WarmPlan | undefined
  readonly sent: Buffer
}

/** Replays `folder` through a ProxyObserver (its own recognising planner) and, when `on`, a planner in front. */
async function replay(folder: string, on: boolean): Promise<{ replayed: Replayed[]; log: string }> {
  const log = join(directory, `${folder}-${on ? 'on' : 'off'}.jsonl`)
  const observer = new ProxyObserver({ log, recognize: new WarmSummaryPlanner() })
  const planner = new WarmSummaryPlanner()
  const start = Date.now()
  const replayed: Replayed[] = []
  readAgentFixtures(folder).forEach(({ kind, request: recorded }, index) => {
    const body = Buffer.from(recorded.body)
    const headers = Object.fromEntries(Object.entries(recorded.headers).map(([name, value]) => [name, String(value)]))
    const route = routeOf(recorded.method, recorded.url)
    const request: InboundRequest = {
      id: index + 1,
      receivedAt: start + index * 1000,
      method: recorded.method,
      url: recorded.url,
      route,
      rawHeaders: Object.entries(headers).flat(),
      headers,
      body,
      stream: route.streamByPath || (recorded.json as Record<string, unknown>).stream === true,
    }
    const json = recorded.json as Record<string, unknown>
    const plan = on && route.kind === 'generate' ? planner.plan(request, json, observer) : undefined
    const sent = plan?.action === 'rewrite' ? plan.body : body
    const exchange: Exchange = {
      request,
      sent,
      ...(plan ? { plan } : {}),
      answer: { status: 200, streamed: false, content: 'text', totalMs: 5, firstByteMs: 3 },
    }
    observer.observe(exchange)
    replayed.push({ kind, request, json, plan, sent })
  })
  await observer.close()
  return { replayed, log }
}

function apiOf(entry: Replayed): RequestApi {
  return entry.request.route.api as RequestApi
}

describe('the real observer and planner on the recorded agent runs', () => {
  for (const folder of COLD)
    it(`${folder}: with warm summaries on, each summary request is rewritten to repeat its conversation`, async () => {
      const { replayed, log } = await replay(folder, true)
      const summaries = replayed.filter((entry) => entry.kind === 'summary')
      expect(summaries.length).toBeGreaterThan(0)
      for (const entry of replayed) {
        const what = `${folder} request ${entry.request.id} (${entry.kind})`
        if (entry.kind !== 'summary') {
          expect(entry.sent.equals(entry.request.body), what).toBe(true)
          continue
        }
        expect(entry.plan?.action, `${what}: ${JSON.stringify(entry.plan)?.slice(0, 300)}`).toBe('rewrite')
        if (entry.plan?.action !== 'rewrite') continue
        const replays = entry.plan.replays
        const rewritten = JSON.parse(entry.sent.toString('utf8')) as Record<string, unknown>
        const share = prefixShare(apiOf(entry), replays.json, rewritten, replays.request.url).share
        expect(share, what).toBeGreaterThanOrEqual(0.98)
        // The conversation replayed is the last one before it.
        const previous = replayed.slice(0, replayed.indexOf(entry)).findLast((other) => other.kind === 'conversation')
        expect(replays.request.id, what).toBe(previous?.request.id)
      }
      const lines = await readProxyLog(log)
      const compactions = lines.filter((line) => line.warmfold.kind === 'compaction').map((line) => line.warmfold.id)
      expect(compactions).toEqual(summaries.map((entry) => entry.request.id))
    })

  for (const folder of [...COLD, ...ALREADY_WARM])
    it(`${folder}: with warm summaries off, the observer logs each summary request as a compaction`, async () => {
      const { replayed, log } = await replay(folder, false)
      const summaries = replayed.filter((entry) => entry.kind === 'summary').map((entry) => entry.request.id)
      const lines = await readProxyLog(log)
      const compactions = lines.filter((line) => line.warmfold.kind === 'compaction').map((line) => line.warmfold.id)
      expect(compactions).toEqual(summaries)
    })

  for (const folder of ALREADY_WARM)
    it(`${folder}: with warm summaries on, the already-warm summary requests are forwarded untouched`, async () => {
      const { replayed, log } = await replay(folder, true)
      const summaries = replayed.filter((entry) => entry.kind === 'summary')
      for (const entry of replayed) expect(entry.sent.equals(entry.request.body)).toBe(true)
      for (const entry of summaries) expect(entry.plan?.action === 'forward' && entry.plan.summary).toBeTruthy()
      const lines = await readProxyLog(log)
      const compactions = lines.filter((line) => line.warmfold.kind === 'compaction').map((line) => line.warmfold.id)
      expect(compactions).toEqual(summaries.map((entry) => entry.request.id))
    })
})
