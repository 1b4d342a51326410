import { once } from 'node:events'
import { existsSync } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import { createServer } from 'node:http'
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Browser } from 'playwright-core'
import { chromium } from 'playwright-core'
import { PNG } from 'pngjs'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { ProxyObserver } from '../src/index.ts'
import type { CapturedRequest } from './support/observe-capture.ts'
import { exchangeOf, usage } from './support/observe-capture.ts'
import { settle } from './support/observe-settle.ts'
import { capture, H1, H2, H3, KETTLE, result, user } from './support/observe-sdk.ts'

/** Debian's chromium package; `.ci/run` installs it when it is missing. */
const CHROMIUM = '/usr/bin/chromium'
const CHROMIUM_FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]

let browser: Browser
let server: Server
const observer = new ProxyObserver({
  prices: { name: 'anthropic-5m', cacheRead: 0.1, cacheWrite: 1.25, output: 5, usdPerMillionInput: 3 },
  providerToleranceTokens: 0,
})

beforeAll(async () => {
  if (!existsSync(CHROMIUM))
    throw new Error(`the live page's browser test needs Debian's chromium at ${CHROMIUM}: apt-get install -y chromium`)
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS })
  // Stands where the forward room's server will serve the page.
  server = createServer((request, response) => {
    if (request.url === '/_warmfold/state.json') {
      response.setHeader('content-type', 'application/json')
      response.end(JSON.stringify(observer.snapshot()))
    } else if (request.url === '/_warmfold/') {
      response.setHeader('content-type', 'text/html; charset=utf-8')
      response.end(observer.renderPage())
    } else {
      response.statusCode = 404
      response.end()
    }
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
}, 120_000)

afterAll(async () => {
  await browser?.close()
  server?.closeAllConnections()
  server?.close()
  await observer.close()
})

it('shows sessions, breaks with cause, cost and first divergence, and compactions, and updates itself', async () => {
  const agent = {
    headers: { 'x-claude-code-session-id': '<script>alert(1)</script>', 'user-agent': 'claude-cli/2.1.332' },
  }
  const pruned = [...H3.slice(0, 2), result('call_1', 'read_file', `${KETTLE.slice(0, 80)} [pruned]`), ...H3.slice(3)]
  const requests = await capture('anthropic-messages', [
    [H1, agent],
    [H2, agent],
    [H3, agent],
    [pruned, agent],
    [[...pruned, user('Write a hand-over note.')], { ...agent, tools: false }],
    [[...pruned, user('And the clock?')], agent],
  ])
  const at = 1_000_000
  const feed = (index: number, script: Partial<Parameters<typeof exchangeOf>[1]> = {}) =>
    observer.observe(
      exchangeOf(requests[index] as CapturedRequest, { id: index + 1, at: at + index * 1000, ...script }),
    )
  feed(0, { usage: usage(400, 0) })
  feed(1, { usage: usage(1200, 380) })
  feed(2, { usage: usage(1600, 0), providerDiagnosis: 'previous_message_not_found' })
  feed(3, { usage: usage(1700, 300) })
  feed(4, {
    usage: usage(1750, 0),
    plan: { action: 'forward', summary: { agent: 'claude-code', confidence: 0.9, reason: 'marker' } },
  })
  await settle(observer)

  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } })
  const requested: string[] = []
  page.on('request', (request) => void requested.push(request.url()))
  const address = server.address() as AddressInfo
  const url = `http://127.0.0.1:${address.port}/_warmfold/`
  await page.goto(url)
  const text = await page.locator('main').innerText()
  expect(text).toContain('5 requests')
  // The session header is shown as text, never run.
  expect(text).toContain('anthropic-messages x-claude-code-session-id=<script>alert(1)</script>')
  expect(text).toMatch(/Claude Code\t5\t\d+\.\d %\t2\t1\t\$0\.\d{4}/)
  expect(text).toContain('provider side: TTL, eviction or routing')
  expect(text).toContain('previous_message_not_found')
  expect(text).toMatch(/prune\tmessage 2 \(user\) at char [\d,]+/)
  expect(text).toMatch(/#5\t.*\tClaude Code\t\$0\.\d{4}\t/)
  expect(text).toContain('forwarded as sent')

  // A new request shows up without a reload (the page polls every 2 s).
  feed(5, { usage: usage(1800, 1500) })
  await page.waitForFunction("document.querySelector('main').textContent.includes('6 requests')", null, {
    timeout: 10_000,
  })
  const shot = await page.screenshot({ fullPage: true })
  if (process.env.WARMFOLD_PAGE_SHOT) await writeFile(process.env.WARMFOLD_PAGE_SHOT, shot)
  const png = PNG.sync.read(shot)
  const colors = new Set<string>()
  for (let offset = 0; offset < png.data.length; offset += 4)
    colors.add(`${png.data[offset]},${png.data[offset + 1]},${png.data[offset + 2]}`)
  expect(colors.size).toBeGreaterThan(20)
  expect(new Set(requested)).toEqual(new Set([url]))
  await page.close()
}, 120_000)
