import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Context } from '@cordisjs/core'
import { RecordingServer } from '@warmfold/test-utils'
import { describe, expect, it } from 'vitest'
import { WarmfoldProxy } from '../src/index.ts'

const DEPTH = 500_000
const deep = '['.repeat(DEPTH) + ']'.repeat(DEPTH)
/** A Chat summary-shaped request whose tool schema and tool output nest half a million levels deep. */
const HOSTILE =
  '{"model":"m","messages":[{"role":"system","content":"x"},{"role":"user","content":"hi"},' +
  '{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},' +
  `{"role":"tool","tool_call_id":"c","content":${JSON.stringify(deep)}},{"role":"user","content":"Summarize the conversation."}],` +
  `"tools":[{"type":"function","function":{"name":"f","parameters":${deep}}}]}`
const PLAIN = '{"model":"m","messages":[{"role":"user","content":"hi"}]}'

describe('the whole proxy on hostile input', () => {
  it('forwards a body nested 500,000 levels deep byte for byte (warm summaries on), logs it as unreadable with why, and keeps serving', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'warmfold-proxy-hostile-'))
    const answer = { id: 'x', choices: [{ message: { role: 'assistant', content: 'ok' } }] }
    const upstream = await RecordingServer.start(() => ({ status: 200, body: answer }))
    const ctx = new Context()
    await ctx.start()
    const log = join(directory, 'proxy.jsonl')
    ctx.plugin(WarmfoldProxy, { upstream: upstream.origin, port: 0, warmSummaries: 'on', log })
    await ctx.lifecycle.flush()
    const proxy = ctx.proxy
    try {
      const statuses: number[] = []
      for (const body of [HOSTILE, HOSTILE, PLAIN]) {
        const reply = await fetch(`${proxy.address!.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
        })
        statuses.push(reply.status)
        expect(await reply.json()).toEqual(answer)
      }
      expect(statuses).toEqual([200, 200, 200])
      expect(upstream.requests.map((request) => request.body)).toEqual([HOSTILE, HOSTILE, PLAIN])
      await proxy.close()
      const lines = (await readFile(log, 'utf8'))
        .trim()
        .split('\n')
        .map((line) => (JSON.parse(line) as { warmfold: { kind: string; unreadable?: string } }).warmfold)
      expect(lines.map((line) => line.kind)).toEqual(['unreadable', 'unreadable', 'conversation'])
      for (const line of lines.slice(0, 2)) expect(line.unreadable).toMatch(/^the observer could not analyse it: /)
    } finally {
      await ctx.stop()
      await upstream.close()
      await rm(directory, { recursive: true, force: true })
    }
  })
})
