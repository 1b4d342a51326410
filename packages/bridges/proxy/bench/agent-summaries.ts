/**
 * `pnpm --filter @warmfold/proxy agent-summaries`: replays each recorded agent
 * (`test/fixtures/<agent>-<version>/`) through the warm planner, as the proxy would with
 * `--warm-summaries on`, and prints per summary request how much of the conversation request it
 * summarizes it repeats as a prefix (canonical characters in provider render order) and what it
 * sends on top of that (the part a provider prefills), as the agent wrote it and as rewritten.
 * Tokens are characters ÷ 4.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { RequestApi } from '@warmfold/cache-ledger/prefix'
import { detectApi } from '@warmfold/cache-ledger/prefix'
import type { RememberedRequest } from '../src/index.ts'
import { WarmSummaryPlanner } from '../src/index.ts'
import { HeldMemory, inbound, prefixShare, remembered } from '../test/warm-support.ts'

const FIXTURES = join(import.meta.dirname, '..', 'test', 'fixtures')

const tokens = (chars: number) => Math.round(chars / 4).toLocaleString('en-US')
const shared = (share: { share: number; chars: number }) => Math.round(share.share * share.chars)

console.log(
  '| agent | request | conversation request | repeated as written | repeated as sent | prefilled as written | prefilled as sent |',
)
console.log('|---|---|---|---|---|---|---|')
for (const agent of readdirSync(FIXTURES).toSorted()) {
  const files = readdirSync(join(FIXTURES, agent))
    .filter((file) => /^\d+-\w+\.json$/.test(file))
    .toSorted()
  const planner = new WarmSummaryPlanner()
  const held: RememberedRequest[] = []
  files.forEach((file, index) => {
    const { url, body } = JSON.parse(readFileSync(join(FIXTURES, agent, file), 'utf8')) as {
      url: string
      body: Record<string, unknown>
    }
    const detected = detectApi({ url, body, headers: {} }, undefined)
    if (!('api' in detected)) throw new Error(`${agent}/${file}: ${detected.error}`)
    const api: RequestApi = detected.api
    const at = Date.parse('2026-12-04T10:00:00Z') + index * 1_000
    const plan = planner.plan(inbound(api, body, at, url), body, new HeldMemory(held))
    if (file.includes('-conversation')) held.push(remembered(api, body, at, url))
    if (!file.includes('-summary')) return
    const last = plan.action === 'rewrite' ? plan.replays : held.at(-1)
    if (!last) return
    const sent = plan.action === 'rewrite' ? (JSON.parse(plan.body.toString('utf8')) as Record<string, unknown>) : body
    const before = prefixShare(api, last.json, body, last.request.url)
    const after = prefixShare(api, last.json, sent, last.request.url)
    const own = (request: Record<string, unknown>) => prefixShare(api, request, request, url).chars
    const row = [
      agent,
      `${file}${plan.action === 'rewrite' ? '' : ' (forwarded: ' + (plan.reason ?? 'not a rewrite') + ')'}`,
      tokens(before.chars),
      `${tokens(shared(before))} (${((100 * shared(before)) / before.chars).toFixed(1)} %)`,
      `${tokens(shared(after))} (${((100 * shared(after)) / after.chars).toFixed(1)} %)`,
      tokens(own(body) - shared(before)),
      tokens(own(sent) - shared(after)),
    ]
    console.log(`| ${row.join(' | ')} |`)
  })
}
