import { mkdtempSync, readFileSync, statSync } from 'node:fs'
import type { Server } from 'node:http'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { parseProxyArgs } from '../src/proxy/parse-proxy-args.ts'
import { runProxy } from '../src/proxy/proxy-command.ts'
import { runCli } from '../src/run-cli.ts'
import { RecordingServer } from '@warmfold/test-utils'
import { chatText, recordedQwen, send } from './support/proxy-replicas.ts'

const servers: Server[] = []
afterEach(async () => {
  for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve))
})

/** A scripted Chat Completions upstream on 127.0.0.1 that records the bodies it got. */
async function upstream(): Promise<{ url: string; bodies: string[] }> {
  const bodies: string[] = []
  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      bodies.push(Buffer.concat(chunks).toString('utf8'))
      response.writeHead(200, { 'content-type': 'application/json' })
      response.end(
        JSON.stringify({
          id: 'chatcmpl-1',
          object: 'chat.completion',
          choices: [{ index: 0, message: { role: 'assistant', content: 'Hello.' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 2000, completion_tokens: 2, prompt_tokens_details: { cached_tokens: 1536 } },
        }),
      )
    })
  })
  servers.push(server)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, bodies }
}

describe('warmfold proxy', () => {
  it('listens, forwards a request byte for byte, logs it 0600 and prints what it saw when stopped', async () => {
    const { url, bodies } = await upstream()
    const log = join(mkdtempSync(join(tmpdir(), 'proxy-command-')), 'proxy.jsonl')
    let out = ''
    const stopper = { stop: () => {} }
    const stopped = new Promise<void>((resolve) => (stopper.stop = resolve))
    const io = { stdout: (text: string) => (out += text), stderr: (text: string) => (out += text) }
    const args = parseProxyArgs(['--upstream', url, '--port', '0', '--log', log, '--price', 'openai'], {})
    const running = runProxy(args, io, (done) => void stopped.then(done))
    await expect.poll(() => out).toContain('listening on http://127.0.0.1:')
    const proxy = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out)![1]!
    expect(out).toContain(`OPENAI_BASE_URL=${proxy}/v1`)
    const body = '{"model":"m","messages":[{"role":"user","content":"Hi"}]}'
    const answer = await fetch(`${proxy}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test-key-never-logged' },
      body,
    })
    expect(((await answer.json()) as { choices: { message: { content: string } }[] }).choices[0]!.message.content).toBe(
      'Hello.',
    )
    expect(bodies).toEqual([body])
    stopper.stop()
    expect(await running).toBe(0)
    expect(out).toContain('stopped after 1 request(s) in 1 session(s): 0 cache break(s), 0 compaction(s), 76.8 %')
    expect(statSync(log).mode & 0o777).toBe(0o600)
    const text = readFileSync(log, 'utf8')
    expect(text.trim().split('\n')).toHaveLength(1)
    expect(text).not.toContain('sk-test-key-never-logged')
  })

  it('prints a line on stderr when a warm rewrite fails open, naming the request and why', async () => {
    const requests = recordedQwen()
    const refusal = { error: { message: 'tools are not allowed here' } }
    // The third request upstream is the rewritten summary request: refused, so the original follows.
    const server = await RecordingServer.start((_request, index) =>
      index === 2 ? { status: 400, body: refusal } : chatText(),
    )
    let stdout = ''
    let stderr = ''
    const stopper = { stop: () => {} }
    const stopped = new Promise<void>((resolve) => (stopper.stop = resolve))
    const io = { stdout: (text: string) => (stdout += text), stderr: (text: string) => (stderr += `${text}\n`) }
    const args = parseProxyArgs(['--upstream', server.origin, '--port', '0', '--warm-summaries', 'on'], {})
    const running = runProxy(args, io, (done) => void stopped.then(done))
    try {
      await expect.poll(() => stdout).toContain('listening on http://127.0.0.1:')
      const proxy = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(stdout)![1]!
      expect([
        await send(proxy, requests[0]!),
        await send(proxy, requests[1]!),
        await send(proxy, requests[2]!),
      ]).toEqual([200, 200, 200])
      expect(server.requests.map((request) => request.body).at(-1)).toBe(requests[2]!.bytes)
      expect(stderr).toBe(
        "warmfold proxy: request 3: the warm rewrite failed open, the agent's own request was sent: " +
          'the rewritten request was answered with status 400\n',
      )
    } finally {
      stopper.stop()
      await running
      await server.close()
    }
  })

  it('says which address it could not listen on', async () => {
    const { url } = await upstream()
    const taken = Number(new URL(url).port)
    const code = await runCli(['proxy', '--upstream', url, '--port', String(taken)], {
      stdout: () => {},
      stderr: (text) =>
        expect(text).toMatch(new RegExp(`the proxy could not start on 127\\.0\\.0\\.1:${taken}: .*EADDRINUSE`)),
    })
    expect(code).toBe(1)
  })

  it('names --log and the proxy log when the log file cannot be written, before it listens', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'warmfold-proxy-log-'))
    const lines: string[] = []
    const code = await runCli(['proxy', '--upstream', 'http://127.0.0.1:9', '--log', folder], {
      stdout: () => {},
      stderr: (text) => void lines.push(text),
    })
    expect(code).toBe(2)
    expect(lines).toEqual([
      `warmfold: --log ${JSON.stringify(folder)} is a folder; name a file to write the proxy log to`,
    ])
  })
})
