import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createUserMessage, LlmRuntime, toolCallBlock } from '@warmfold/llm'
import { SessionStore } from '@warmfold/session'
import { createTestContext } from '@warmfold/test-utils'
import { afterEach, describe, expect, it } from 'vitest'
import { CacheLedger, cacheTotals } from '../src/index.ts'
import { RequestObserver } from '../src/request-observer.ts'
import type { LedgerHarness } from './ledger-fixture.ts'
import {
  BASE,
  conversationRequest,
  finish,
  logFold,
  mountLedger,
  observations,
  send,
  startSession,
  step,
} from './ledger-fixture.ts'

const harnesses: LedgerHarness[] = []
const folders: string[] = []
afterEach(async () => {
  for (const harness of harnesses.splice(0)) await finish(harness)
  for (const folder of folders.splice(0)) await rm(folder, { recursive: true, force: true })
})

async function folder(): Promise<string> {
  const path = await mkdtemp(join(tmpdir(), 'cache-ledger-'))
  folders.push(path)
  return path
}

const SECRET = 'ZEBRA-7731-never-in-the-ledger'

describe('the ledger in the session log', () => {
  it.each(['memory', 'file'] as const)(
    'counts every request, summary calls and retries included, in the %s store',
    async (store) => {
      const harness = await mountLedger(store === 'file' ? { directory: await folder() } : {})
      harnesses.push(harness)
      const session = await startSession(harness)
      let summaryCalls = 0
      harness.usage = (request) =>
        request.purpose === 'compaction'
          ? { inputTokens: 120, cacheReadTokens: 3000, outputTokens: 400 }
          : { inputTokens: 50, cacheReadTokens: 1000, cacheWriteTokens: 50, outputTokens: 30 }
      harness.reply = (request) => {
        // The first summary answer is a tool call, so the caller retries the very same request.
        if (request.purpose === 'compaction' && summaryCalls++ === 0)
          return {
            content: [toolCallBlock('x', 'read', '{}')],
            usage: { inputTokens: 120, cacheReadTokens: 3000, outputTokens: 10 },
          }
        return undefined
      }
      await step(harness, session)
      await step(harness, session)
      const summary = {
        ...BASE,
        messages: [...session.deriveMessages(), createUserMessage('Summarize.')],
        purpose: 'compaction',
        sessionId: session.id,
      }
      await send(harness, summary)
      await send(harness, summary)
      const totals = harness.ctx.cacheLedger.totals(session)
      expect(totals).toEqual({
        requests: 4,
        purposes: { conversation: 2, compaction: 2 },
        uncached: 50 + 50 + 120 + 120,
        cached: 1000 + 1000 + 3000 + 3000,
        written: 50 + 50,
        output: 30 + 30 + 10 + 400,
        unreported: 0,
        breaks: {},
        guardWarnings: 0,
        guardRefusals: 0,
      })
    },
  )

  it('writes observations to the JSONL file as plain events, never a prompt body, and reopens them unchanged', async () => {
    const directory = await folder()
    const harness = await mountLedger({ directory })
    harnesses.push(harness)
    const session = await startSession(harness)
    session.append('user/message', { message: createUserMessage(`The password is ${SECRET}.`) }, 'append')
    await step(harness, session, { system: `${BASE.system} ${SECRET}` }, `const key = '${SECRET}'`)
    await step(harness, session, { system: `${BASE.system} ${SECRET}` })
    logFold(session, 0, 2)
    await step(harness, session, { system: `${BASE.system} ${SECRET}` })
    await send(harness, {
      ...conversationRequest(session),
      system: `${BASE.system} ${SECRET}`,
      reasoningEffort: 'low',
      tools: [{ name: SECRET, description: SECRET, parameters: { type: 'object' } }],
    })
    const logged = observations(session)
    expect(logged.map((observation) => observation.cause)).toEqual(['none', 'none', 'fold', 'envelope'])
    await harness.ctx.sessions.flush(session)
    const lines = (await readFile(join(directory, `${session.id}.jsonl`), 'utf8')).trimEnd().split('\n')
    const ledgerLines = lines.filter((line) => line.includes('"type":"cache/'))
    expect(ledgerLines).toHaveLength(4)
    for (const line of ledgerLines) expect(line).not.toContain(SECRET)
    expect(lines.some((line) => line.includes(SECRET))).toBe(true)
    const totals = cacheTotals(session.events)
    await harness.ctx.sessions.close(session)

    const reopened = await mountLedger({ directory })
    harnesses.push(reopened)
    const again = await reopened.ctx.sessions.open(session.id)
    expect(observations(again)).toEqual(logged)
    expect(cacheTotals(again.events)).toEqual(totals)
  })

  it('forgets prompt parts and sessions not seen for forgetAfterMs', () => {
    const observer = new RequestObserver({ toleranceTokens: 1024, forgetAfterMs: 60_000 })
    const request = {
      ...BASE,
      messages: [createUserMessage('one'), createUserMessage('two')],
      purpose: 'conversation',
      sessionId: 's',
    }
    observer.finish(observer.send(request, undefined, Number.POSITIVE_INFINITY, 0), { finishReason: 'stop' }, 0)
    expect(observer.indexSize).toBe(BASE.tools.length + 1 + 2)
    expect(observer.sessionCount).toBe(1)
    const later = { ...request, messages: [createUserMessage('three')], sessionId: 't' }
    observer.finish(observer.send(later, undefined, Number.POSITIVE_INFINITY, 61_000), { finishReason: 'stop' }, 61_000)
    // Only the second request's path is left (its tools and system were refreshed at 61 s).
    expect(observer.indexSize).toBe(BASE.tools.length + 1 + 1)
    expect(observer.sessionCount).toBe(1)
  })
})

describe('CacheLedger config', () => {
  it('rejects an unknown key and a bad guard, naming them', async () => {
    const test = await createTestContext()
    test.ctx.plugin(LlmRuntime)
    test.ctx.plugin(SessionStore, {})
    test.ctx.plugin(CacheLedger, { guards: 'warn' } as never)
    test.ctx.plugin(CacheLedger, { guard: 'block' } as never)
    expect(test.errors.map((error) => (error as Error).message)).toEqual([
      'CacheLedger config: unknown key "guards" (did you mean "guard"?); known keys: guard, cacheTtlMs, providerToleranceTokens, forgetAfterMs, now, estimateUsage',
      expect.stringMatching(/^CacheLedger config: .*guard/),
    ])
    await test.dispose()
  })

  it('defaults: guard warn, tolerance 1024, a day of memory, no extra TTLs', () => {
    expect(CacheLedger.Config({})).toEqual({
      guard: 'warn',
      cacheTtlMs: {},
      providerToleranceTokens: 1024,
      forgetAfterMs: 86_400_000,
    })
  })
})
