import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { RequestApi } from '@warmfold/cache-ledger/prefix'
import { detectApi } from '@warmfold/cache-ledger/prefix'
import { describe, expect, it } from 'vitest'
import type { RememberedRequest } from '../src/index.ts'
import { WarmSummaryPlanner } from '../src/index.ts'
import { listKeyOf } from '../src/warm/wire-view.ts'
import { HeldMemory, inbound, prefixShare, remembered, rewrittenBody } from './warm-support.ts'

/**
 * The real agents' requests recorded by the agents room (`test/fixtures/<agent>-<version>/`, files
 * `NN-conversation.json`, `NN-summary.json`, `NN-side.json`, each `{ url, body, … }`), replayed
 * through the planner in order, the memory holding every conversation request before. Runs for
 * the recordings present (they arrive with the agents room's branch).
 */
const FIXTURES = join(import.meta.dirname, 'fixtures')
const RECORDINGS = ['codex-0.171.0', 'qwen-code-cold-0.24.4', 'gemini-cli-0.61.0', 'pi-0.73.1', 'opencode-1.18.33']
/** Agents whose summary request is already warm (a replay plus the instruction): left untouched. */
const ALREADY_WARM = ['qwen-code-0.24.4', 'claude-code-2.1.332']

interface Recorded {
  readonly file: string
  readonly url: string
  readonly body: Record<string, unknown>
}

function recordingOf(name: string): Recorded[] {
  const dir = join(FIXTURES, name)
  return readdirSync(dir)
    .filter((file) => /^\d+-\w+\.json$/.test(file))
    .toSorted()
    .map((file) => {
      const { url, body } = JSON.parse(readFileSync(join(dir, file), 'utf8')) as Omit<Recorded, 'file'>
      return { file, url, body }
    })
}

function apiOf(recorded: Recorded): RequestApi {
  const detected = detectApi({ url: recorded.url, body: recorded.body, headers: {} }, undefined)
  if (!('api' in detected)) throw new Error(`${recorded.file}: ${detected.error}`)
  return detected.api
}

describe('warm summaries: recorded agents', () => {
  for (const name of RECORDINGS)
    describe(name, () => {
      it('rewrites each summary request into a warm one and leaves every other request alone', () => {
        const planner = new WarmSummaryPlanner()
        const held: RememberedRequest[] = []
        let summaries = 0
        recordingOf(name).forEach((recorded, index) => {
          const api = apiOf(recorded)
          const at = Date.parse('2026-12-04T10:00:00Z') + index * 1_000
          const plan = planner.plan(inbound(api, recorded.body, at, recorded.url), recorded.body, new HeldMemory(held))
          if (recorded.file.includes('-summary')) {
            summaries++
            const body = rewrittenBody(plan)
            if (plan.action !== 'rewrite') return
            const replayed = plan.replays
            expect(plan.recognition.confidence, recorded.file).toBeGreaterThanOrEqual(0.8)
            expect(
              prefixShare(api, replayed.json, body, replayed.request.url).share,
              recorded.file,
            ).toBeGreaterThanOrEqual(0.98)
            expect(prefixShare(api, replayed.json, recorded.body, replayed.request.url).share).toBeLessThan(0.98)
            // The conversation request replayed is the last one the summary's history holds.
            expect(held.indexOf(replayed), recorded.file).toBeGreaterThanOrEqual(held.length - 2)
            // The agents send compact JSON, so the bytes sent repeat the conversation request's bytes
            // up to the end of its message list (up to its last message when the text went inside it).
            const sent = plan.body.toString()
            const before = JSON.stringify(replayed.json)
            const list = replayed.json[listKeyOf(api)] as unknown[]
            const listEnd = before.indexOf(JSON.stringify(list)) + JSON.stringify(list).length - 1
            const inside = plan.diff.at(-1)?.endsWith('after its tool results') === true
            const cut = inside ? listEnd - JSON.stringify(list.at(-1)).length : listEnd
            expect(sent.slice(0, cut), recorded.file).toBe(before.slice(0, cut))
          } else {
            expect(plan.action, recorded.file).toBe('forward')
            // Qwen Code 0.24.4 tries a warm summary first (its own system and tools, the prompt appended).
            if (plan.action === 'forward' && plan.summary) expect(plan.reason, recorded.file).toMatch(/^already warm/)
            if (recorded.file.includes('-conversation')) held.push(remembered(api, recorded.body, at, recorded.url))
          }
        })
        expect(summaries).toBeGreaterThan(0)
      })
    })
  for (const name of ALREADY_WARM)
    it(`${name}: forwards its summary requests untouched, counted as summaries, each already repeating its conversation`, () => {
      const planner = new WarmSummaryPlanner()
      const held: RememberedRequest[] = []
      let summaries = 0
      recordingOf(name).forEach((recorded, index) => {
        const api = apiOf(recorded)
        const at = Date.parse('2026-12-04T10:00:00Z') + index * 1_000
        const plan = planner.plan(inbound(api, recorded.body, at, recorded.url), recorded.body, new HeldMemory(held))
        expect(plan.action, recorded.file).toBe('forward')
        if (recorded.file.includes('-summary')) {
          summaries++
          expect(plan.action === 'forward' && plan.summary !== undefined, recorded.file).toBe(true)
          expect(plan.action === 'forward' ? plan.reason : '', recorded.file).toMatch(/already warm/)
          const last = held.at(-1)!
          expect(prefixShare(api, last.json, recorded.body, last.request.url).share, recorded.file).toBeGreaterThan(
            0.98,
          )
        } else if (recorded.file.includes('-conversation')) held.push(remembered(api, recorded.body, at, recorded.url))
      })
      expect(summaries).toBeGreaterThan(0)
    })
})
