import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { Context } from '@cordisjs/core'
import { createUserMessage } from '@warmfold/llm'
import { SessionStore } from '@warmfold/session'
import type { Browser, Page } from 'playwright-core'
import { chromium } from 'playwright-core'
import { PNG } from 'pngjs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { logLines, workloadSessionLog } from './report-fixtures.ts'
import { cli } from './run-cli.ts'

/** Debian's chromium package; `.ci/run` installs it when it is missing. */
const CHROMIUM = '/usr/bin/chromium'
/** Headless as root on a machine without network: no sandbox, GPU or background traffic, and a fresh profile (Playwright's own temporary one). */
const CHROMIUM_FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]

let directory: string
let browser: Browser

beforeAll(async () => {
  // Never skipped: a machine without the browser fails here, saying how to get it.
  if (!existsSync(CHROMIUM))
    throw new Error(
      `the report's browser test needs Debian's chromium at ${CHROMIUM}: apt-get install -y chromium (.ci/run installs it)`,
    )
  directory = await mkdtemp(join(tmpdir(), 'warmfold-report-browser-'))
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS })
}, 120_000)

afterAll(async () => {
  await browser?.close()
  if (directory) await rm(directory, { recursive: true, force: true })
})

/** Opens `file` from file:// and returns the page with every URL it requested. */
async function open(file: string): Promise<{ page: Page; requested: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
  const requested: string[] = []
  page.on('request', (request) => void requested.push(request.url()))
  await page.goto(pathToFileURL(file).href)
  return { page, requested }
}

/** The chart spans its box: the SVG takes the box's width, and the plot (the axis line) nearly all of it. */
async function expectChartFillsItsBox(page: Page): Promise<void> {
  // The box has no horizontal padding: its client width is the room the chart has.
  const geometry = await page.locator('.chart-scroll').evaluate((box) => ({
    inner: box.clientWidth,
    svg: box.querySelector('svg.chart')!.getBoundingClientRect().width,
    plot: box.querySelector('svg.chart .axis-line')!.getBoundingClientRect().width,
  }))
  expect(geometry.svg).toBeGreaterThanOrEqual(geometry.inner - 1)
  expect(geometry.svg).toBeLessThanOrEqual(geometry.inner + 1)
  expect(geometry.plot / geometry.inner).toBeGreaterThan(0.9)
}

/** No fold or prune label touches another label, or another marker's line, as the browser lays them out. */
async function expectMarkerLabelsApart(page: Page): Promise<void> {
  const markers = await page.locator('svg.chart g.marker').evaluateAll((groups) =>
    groups.map((group) => {
      const [label, line] = [
        group.querySelector('text')!.getBoundingClientRect(),
        group.querySelector('line')!.getBoundingClientRect(),
      ]
      return {
        label: { left: label.left, right: label.right, top: label.top, bottom: label.bottom },
        line: { left: line.left, right: line.right, top: line.top, bottom: line.bottom },
        text: group.querySelector('text')!.textContent,
      }
    }),
  )
  expect(markers.length).toBeGreaterThan(1)
  type Box = (typeof markers)[number]['label']
  const intersect = (a: Box, b: Box) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom
  for (const [index, marker] of markers.entries()) {
    for (const [other, neighbour] of markers.entries()) {
      if (other === index) continue
      expect(
        intersect(marker.label, neighbour.label),
        `label "${marker.text}" #${index} overlaps label "${neighbour.text}" #${other}`,
      ).toBe(false)
      expect(
        intersect(marker.label, neighbour.line),
        `label "${marker.text}" #${index} is crossed by the line of "${neighbour.text}" #${other}`,
      ).toBe(false)
    }
  }
}

describe('warmfold report --out in headless Chromium', () => {
  it('renders one bar per request, a fold marker where the log folds, break hover texts, offline, and a screenshot that is not blank', async () => {
    const { file: log } = await workloadSessionLog(directory, 'legacy-8000', {
      window: 8000,
      steps: 40,
      strategy: 'legacy',
    })
    const html = join(directory, 'legacy.html')
    expect((await cli(['report', log, '--out', html])).code).toBe(0)
    // What the page must show, read from the log line by line, independently of the report.
    const lines = await logLines(log)
    const observations = lines.filter((line) => line.type === 'cache/observation')
    const foldsAfter = lines
      .filter((line) => line.type === 'compaction/summary')
      .map((fold) => observations.filter((observation) => observation.line < fold.line).length)
    const breaks = observations.flatMap((line, index) =>
      line.data.cause === 'none' ? [] : [{ request: index + 1, cause: line.data.cause as string }],
    )
    expect(foldsAfter).toHaveLength(2)

    const { page, requested } = await open(html)
    const bars = await page.locator('svg.chart g.request').evaluateAll((groups) =>
      groups.map((group) => ({
        id: group.id,
        title: group.querySelector('title')?.textContent ?? '',
        // Rendered size of each bucket, as laid out by the browser.
        heights: [...group.querySelectorAll('rect.seg')].map((rect) => rect.getBoundingClientRect().height),
      })),
    )
    expect(bars.map((bar) => bar.id)).toEqual(observations.map((_, index) => `request-${index + 1}`))
    for (const bar of bars) expect(Math.max(...bar.heights)).toBeGreaterThan(0)
    const folds = await page
      .locator('svg.chart g.marker.fold')
      .evaluateAll((markers) => markers.map((marker) => Number(marker.getAttribute('data-after-request'))))
    expect(folds).toEqual(foldsAfter)
    // Each fold line is drawn between the bars of the requests it came between.
    for (const after of foldsAfter) {
      const line = await page.locator(`svg.chart g.marker.fold[data-after-request="${after}"] line`).boundingBox()
      const before = await page.locator(`#request-${after} rect.seg`).first().boundingBox()
      const next = await page
        .locator(`#request-${after + 1} rect.seg`)
        .first()
        .boundingBox()
      expect(line!.x).toBeGreaterThan(before!.x + before!.width - 1)
      expect(line!.x).toBeLessThan(next!.x + 1)
    }
    expect(await page.locator('svg.chart g.marker.prune').count()).toBeGreaterThan(0)
    await expectChartFillsItsBox(page)
    await expectMarkerLabelsApart(page)
    const broken = await page
      .locator('svg.chart g.request.break')
      .evaluateAll((groups) => groups.map((group) => ({ id: group.id, cause: group.getAttribute('data-cause') })))
    expect(broken).toEqual(breaks.map((entry) => ({ id: `request-${entry.request}`, cause: entry.cause })))
    const envelope = bars[(breaks.find((entry) => entry.cause === 'envelope') as { request: number }).request - 1]!
    expect(envelope.title).toContain('break (envelope): a prompt-shaping setting changed')
    expect(envelope.title).toContain('the envelope differs from the previous request: reasoningEffort')
    expect(await page.locator('table.breaks tbody tr').count()).toBe(breaks.length)
    expect(await page.locator('#totals').innerText()).toContain(
      `${observations.length}: ${observations.length - 2} conversation, 2 compaction`,
    )
    expect(requested).toEqual([pathToFileURL(html).href])

    const png = PNG.sync.read(await page.screenshot({ fullPage: true }))
    const colors = new Map<string, number>()
    for (let offset = 0; offset < png.data.length; offset += 4) {
      const key = `${png.data[offset]},${png.data[offset + 1]},${png.data[offset + 2]}`
      colors.set(key, (colors.get(key) ?? 0) + 1)
    }
    expect(colors.size).toBeGreaterThan(50)
    // The cached and written fills cover whole bars, not only anti-aliased edges.
    expect(colors.get('47,158,95') ?? 0).toBeGreaterThan(5000)
    expect(colors.get('227,162,26') ?? 0).toBeGreaterThan(500)
    await page.close()
  }, 120_000)

  it("a bench session kept with --keep-sessions reports from the log alone: one bar per request with the ledger's numbers, its folds", async () => {
    const sessions = join(directory, 'sessions')
    await mkdir(sessions)
    const bench = await cli([
      'bench',
      '--json',
      '--windows',
      '4800',
      '--steps',
      '24',
      '--strategies',
      'warmfold',
      '--keep-sessions',
      sessions,
    ])
    expect(bench.code).toBe(0)
    const run = (JSON.parse(bench.stdout) as { runs: Array<{ conversationRequests: number; summaryCalls: unknown[] }> })
      .runs[0]!
    const html = join(directory, 'bench.html')
    expect((await cli(['report', join(sessions, 'warmfold-4800.jsonl'), '--out', html])).code).toBe(0)
    const { page } = await open(html)
    expect(await page.locator('svg.chart g.request').count()).toBe(run.conversationRequests + run.summaryCalls.length)
    // The workload's ledger logs every request with the simulator's charge as its usage.
    expect(await page.locator('svg.chart g.request rect.seg.none').count()).toBe(0)
    expect(await page.locator('svg.chart g.request rect.seg.cached').count()).toBeGreaterThan(0)
    expect(await page.locator('svg.chart g.marker.fold').count()).toBe(run.summaryCalls.length)
    expect(await page.locator('.source').innerText()).toContain('Numbers from the cache ledger')
    // Every committed fold's audit, one row each: survival per class, the trail, re-work after the fold.
    const folds = (
      JSON.parse(bench.stdout) as { runs: Array<{ summaryCalls: Array<{ audit: unknown }> }> }
    ).runs[0]!.summaryCalls.filter((call) => call.audit !== null).length
    expect(folds).toBeGreaterThan(0)
    expect(await page.locator('#fold-audit h2').innerText()).toBe(`Fold audit (${folds})`)
    expect(await page.locator('#fold-audit tbody tr').count()).toBe(folds)
    expect(await page.locator('#fold-audit tbody tr').first().innerText()).toMatch(/of 1000 tokens|of \d+ tokens/)
    await page.close()
  }, 120_000)

  it('escapes every string from the log: hostile text shows as text and runs nothing', async () => {
    const ctx = new Context()
    await ctx.start()
    const hostile = `<img src=x onerror="document.title='pwned'"><script>document.title='pwned'</script>`
    try {
      ctx.plugin(SessionStore, { store: 'file', directory })
      const session = await ctx.sessions.create('hostile')
      session.append('user/message', { message: createUserMessage(hostile) }, 'append')
      const divergence = {
        part: 'message' as const,
        index: 0,
        role: `"><svg onload="document.title='pwned'">`,
        charOffset: 3,
      }
      for (const cause of ['none', `</title><b>${hostile}</b>`] as const) {
        session.append('cache/observation', {
          purpose: hostile,
          provider: '<u>',
          model: '"m"',
          cached: 40,
          written: 0,
          uncached: 60,
          output: 5,
          chars: 400,
          expected: 3,
          divergence,
          cause: cause as 'none',
          idleMs: null,
          finish: 'stop',
        })
      }
      session.append('cache/guard', { action: 'warn', provider: '<u>', model: 'm', divergence, reason: hostile })
      await ctx.sessions.flush(session)
    } finally {
      await ctx.stop()
    }
    const html = join(directory, 'hostile.html')
    expect((await cli(['report', join(directory, 'hostile.jsonl'), '--out', html])).code).toBe(0)
    const { page } = await open(html)
    expect(await page.title()).toBe('warmfold report: hostile')
    expect(await page.locator('img, script, b, u, svg svg').count()).toBe(0)
    expect(await page.locator('table.breaks td').nth(2).textContent()).toBe(hostile)
    expect(await page.locator('table.guards').innerText()).toContain(hostile)
    expect(await page.locator('table.guards').innerText()).toContain('<u>/m')
    expect(await page.locator('#request-2 title').textContent()).toContain(
      `messages[0] ("><svg onload="document.title='pwned'">) differs at character 3`,
    )
    await page.close()
  }, 120_000)
})
