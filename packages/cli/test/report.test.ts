import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Context } from '@cordisjs/core'
import { SessionStore } from '@warmfold/session'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { LegacyCompactionEngine } from '@warmfold/prefix-cache-testkit'
import type { LogLine } from './report-fixtures.ts'
import { logLines, usageSessionLog, workloadSessionLog } from './report-fixtures.ts'
import { cli } from './run-cli.ts'

const number = (value: number) => Math.round(value).toLocaleString('en-US')

/** The summary's cost line: `units` input-token units, and their dollars at `usdPerMillion`. */
function expectCost(text: string, units: number, usdPerMillion: number): void {
  const match = /^cost {6}\$(\d+\.\d+) \(([\d,]+) input-token units\)$/m.exec(text)
  expect(match?.[2]).toBe(number(units))
  expect(Number(match?.[1])).toBeCloseTo((units * usdPerMillion) / 1e6, 3)
}

let directory: string
let ledgerLog: string
let usageLog: string
let ledgerLines: LogLine[]
let usageLines: LogLine[]

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'warmfold-report-'))
  ledgerLog = (await workloadSessionLog(directory, 'legacy-8000', { window: 8000, steps: 40, strategy: 'legacy' })).file
  usageLog = await usageSessionLog(directory, 'usage', 46)
  ledgerLines = await logLines(ledgerLog)
  usageLines = await logLines(usageLog)
}, 120_000)

afterAll(async () => {
  await rm(directory, { recursive: true, force: true })
})

describe('warmfold report: the terminal summary', () => {
  it('of a log with cache/observation events: totals are the sums of its observations, every break is listed with its cause', async () => {
    const result = await cli(['report', ledgerLog])
    expect(result.code).toBe(0)
    expect(result.stderr).toBe('')
    const observations = ledgerLines.filter((line) => line.type === 'cache/observation')
    const sum = (field: string) => observations.reduce((total, line) => total + (line.data[field] as number), 0)
    const breaks = observations.filter((line) => line.data.cause !== 'none')
    expect(observations.length).toBeGreaterThan(40)
    expect(breaks.map((line) => line.data.cause)).toEqual(expect.arrayContaining(['envelope', 'fold']))
    const text = result.stdout
    expect(text).toContain(`warmfold report: ${ledgerLog} (session legacy-8000), numbers from the cache ledger`)
    expect(text).toContain(`requests  ${observations.length}: ${observations.length - 2} conversation, 2 compaction`)
    const prompt = sum('uncached') + sum('cached') + sum('written')
    expect(text).toContain(
      `prompt    ${number(prompt)} tokens: ${number(sum('cached'))} cached (${((sum('cached') / prompt) * 100).toFixed(1)}%), ${number(sum('written') + sum('uncached'))} prefilled (${number(sum('written'))} written, ${number(sum('uncached'))} uncached)`,
    )
    expect(text).toContain(
      `rewrites  ${ledgerLines.filter((line) => line.type === 'compaction/summary').length} fold(s), ${ledgerLines.filter((line) => line.type === 'compaction/prune').length} pruned tool result(s)`,
    )
    expect(text).toContain(`breaks    ${breaks.length}\n`)
    // deepseek: reads 0.02×, writes 1×, output 4×.
    expect(sum('output')).toBeGreaterThan(0)
    const units = sum('uncached') + sum('written') + sum('cached') * 0.02 + sum('output') * 4
    expectCost(text, units, 0.3)
    const listed = text.split('\n').filter((line) => /^ {2}#\d+ {2}line \d+ /.test(line))
    expect(listed).toHaveLength(breaks.length)
    for (const [index, line] of breaks.entries()) {
      const request = observations.indexOf(line) + 1
      expect(listed[index]).toMatch(
        new RegExp(
          `^ {2}#${request} {2}line ${line.line} {2}${line.data.purpose} {2}${line.data.cause} {2}${number((line.data.written as number) + (line.data.uncached as number))}: `,
        ),
      )
    }
    expect(listed.find((line) => line.includes(' envelope '))).toContain(
      'the envelope differs from the previous request: reasoningEffort',
    )
    expect(listed.find((line) => line.includes(' fold '))).toMatch(
      /a fold replaced old history with a checkpoint: messages\[\d+\] \((user|assistant)\) differs at character [\d,]+/,
    )
    expect(text).not.toContain('counted as 0')
  })

  it('of a log written without the cache ledger: numbers from the provider usage, said so, breaks inferred from the logged rewrites', async () => {
    const result = await cli(['report', usageLog, '--price', 'anthropic-5m'])
    expect(result.code).toBe(0)
    const replies = usageLines.filter((line) => line.type === 'assistant/message' || line.type === 'compaction/summary')
    const usage = (field: string) =>
      replies.reduce((total, line) => total + ((line.data.usage?.[field] as number | undefined) ?? 0), 0)
    const prompt = usage('inputTokens') + usage('cacheReadTokens')
    const text = result.stdout
    expect(text).toContain('numbers from provider usage (no cache ledger in this log)')
    expect(text).toContain('This log has no cache/observation events (it was written without the cache ledger)')
    expect(text).toContain(`requests  ${replies.length}: ${replies.length - 1} conversation, 1 compaction`)
    expect(text).toContain(`prompt    ${number(prompt)} tokens: ${number(usage('cacheReadTokens'))} cached`)
    expect(text).toContain(`${replies.length} request(s) with token numbers did not report cache writes: counted as 0.`)
    // anthropic-5m: reads 0.1×, output 5×, $2 per million uncached input tokens.
    const units = usage('inputTokens') + usage('cacheReadTokens') * 0.1 + usage('outputTokens') * 5
    expectCost(text, units, 2)
    // The conversation request after the fold reads little of the cache: a break, attributed to the fold logged before it.
    const fold = usageLines.find((line) => line.type === 'compaction/summary') as LogLine
    const after = replies[replies.indexOf(fold) + 1] as LogLine
    expect(text).toMatch(
      new RegExp(
        `^ {2}#${replies.indexOf(after) + 1} {2}line ${after.line} {2}conversation {2}fold {2}.*since that request the log records 1 fold\\(s\\)`,
        'm',
      ),
    )
    // The warm summary call replays the conversation: not a break.
    expect(text).not.toMatch(new RegExp(`^ {2}#${replies.indexOf(fold) + 1} `, 'm'))
  })

  it('without the cache ledger, a summary call sent with another envelope is a break attributed to the fields the log shows it changed', async () => {
    const log = await usageSessionLog(directory, 'usage-legacy', 46, LegacyCompactionEngine)
    const lines = await logLines(log)
    const replies = lines.filter((line) => line.type === 'assistant/message' || line.type === 'compaction/summary')
    const summary = lines.find((line) => line.type === 'compaction/summary') as LogLine
    expect(summary.data.reasoningEffort).toBe('high')
    const result = await cli(['report', log])
    expect(result.code).toBe(0)
    expect(result.stdout).toMatch(
      new RegExp(
        `^ {2}#${replies.indexOf(summary) + 1} {2}line ${summary.line} {2}compaction {2}envelope {2}.*the summary call's reasoningEffort differs from the conversation's header`,
        'm',
      ),
    )
  })
})

/** The Fold timing rows `warmfold report` prints for a workload log, checked against the log's own timings and the HTML page. */
async function foldTimingRows(name: string, backgroundFold: boolean): Promise<string[]> {
  const { file, run } = await workloadSessionLog(directory, name, { window: 8000, steps: 30, backgroundFold })
  const ends = run.session.events.filter(
    (event) => event.type === 'compaction/end' && (event.data as { timing?: unknown }).timing !== undefined,
  )
  expect(ends.length).toBeGreaterThan(0)
  const result = await cli(['report', file])
  expect(result.code).toBe(0)
  const section = result.stdout.split('\n\n').find((block) => block.startsWith('Fold timing'))!
  expect(section.split('\n')[0]).toBe(`Fold timing (${ends.length} fold(s); seconds on the engine's clock):`)
  const rows = section.split('\n').slice(1)
  expect(rows).toHaveLength(ends.length)
  for (const [index, event] of ends.entries()) {
    const { timing } = event.data as { timing: { mode: string; readyAfterMs: number; waitedMs: number } }
    expect(rows[index]).toContain(`line ${event.seq + 1}, after request #`)
    expect(rows[index]).toContain(
      `: ${timing.mode}: summary in hand after ${(timing.readyAfterMs / 1000).toFixed(1)} s, the conversation waited ${(timing.waitedMs / 1000).toFixed(1)} s`,
    )
  }
  const out = join(directory, `${name}.html`)
  expect((await cli(['report', file, '--out', out])).code).toBe(0)
  expect(await readFile(out, 'utf8')).toContain(`<section id="fold-timing"><h2>Fold timing (${ends.length})</h2>`)
  return rows
}

describe('warmfold report: strings from the log in the terminal', () => {
  it('lists every prune decision with its figures and why, in the text and the HTML page', async () => {
    // The default pruner at 32k under deepseek prices: each pass that alone would clear the
    // pressure is weighed, and a warm rewrite of this size waits for the fold.
    // Folds at the threshold: a background fold lands before the request gets there.
    const { file, run } = await workloadSessionLog(directory, 'decisions-32000', {
      window: 32_000,
      steps: 40,
      pruner: 'default',
      cachePrices: { read: 0.02, write: 1 },
      backgroundFold: false,
    })
    const logged = run.session.events.filter((event) => event.type === 'compaction/prune-decision')
    expect(logged.length).toBeGreaterThan(0)
    const result = await cli(['report', file])
    expect(result.code).toBe(0)
    const section = result.stdout.split('\n\n').find((block) => block.startsWith('Prune decisions'))!
    expect(section.split('\n')[0]).toBe(
      `Prune decisions (${logged.length} pass(es) that alone would have relieved the pressure):`,
    )
    const rows = section.split('\n').slice(1)
    expect(rows).toHaveLength(logged.length)
    for (const [index, event] of logged.entries()) {
      const data = event.data as { action: string; savedTokens: number; requestsServed: number; reason: string }
      expect(rows[index]).toContain(`line ${event.seq + 1}, after request #`)
      expect(rows[index]).toContain(
        `: ${data.action}: saves ${number(data.savedTokens)} tokens × ${data.requestsServed} request(s) × 0.02 = `,
      )
      expect(rows[index]!.endsWith(`; ${data.reason}`)).toBe(true)
    }
    const out = join(directory, 'decisions.html')
    expect((await cli(['report', file, '--out', out])).code).toBe(0)
    const html = await readFile(out, 'utf8')
    expect(html).toContain(`<section id="prune-decisions"><h2>Prune decisions (${logged.length})</h2>`)
  }, 60_000)

  it("lists every fold's timing (mode, time to the summary, the wait, what the swap prefills) in the text and the HTML page", async () => {
    const sync = await foldTimingRows('timing-sync', false)
    expect(
      sync.every((row) =>
        /: sync: .*, the conversation waited [1-9][\d.]* s; the request after the swap prefills about [\d,]+ new tokens$/.test(
          row,
        ),
      ),
    ).toBe(true)
    const background = await foldTimingRows('timing-background', true)
    expect(
      background.every((row) => /: background: .* hidden; at the threshold: (none|pending|ready)\)/.test(row)),
    ).toBe(true)
  }, 60_000)

  it('a compaction/end whose timing is not what the engine logs is refused, naming the line and the field', async () => {
    const ctx = new Context()
    await ctx.start()
    try {
      ctx.plugin(SessionStore, { store: 'file', directory })
      const session = await ctx.sessions.create('bad-timing')
      session.append('compaction/start', { compactionId: 'c1', turn: 1, trigger: 'background' })
      // A writer other than the engine (the type says `sync | background`): the reader must not trust it.
      session.append('compaction/end', {
        compactionId: 'c1',
        turn: 1,
        timing: {
          mode: 'later' as 'sync',
          startedAt: 0,
          readyAfterMs: 1,
          statusAtThreshold: 'none',
          waitedMs: 0,
          stallSavedMs: 1,
          postSwapPrefillTokens: 0,
        },
      })
      await ctx.sessions.flush(session)
    } finally {
      await ctx.stop()
    }
    const result = await cli(['report', join(directory, 'bad-timing.jsonl')])
    expect(result.code).toBe(1)
    expect(result.stderr).toBe(
      `warmfold: ${join(directory, 'bad-timing.jsonl')}:2: compaction/end timing.mode must be one of sync, background, got "later"\n`,
    )
  })

  it('control characters are printed as escapes, so a log cannot send escape sequences to the terminal', async () => {
    const ctx = new Context()
    await ctx.start()
    try {
      ctx.plugin(SessionStore, { store: 'file', directory })
      const session = await ctx.sessions.create('escapes')
      const divergence = { part: 'message' as const, index: 0, role: 'user\u001b]0;title\u0007', charOffset: 0 }
      session.append('cache/observation', {
        purpose: 'conversation',
        provider: 'p',
        model: 'm',
        cached: 0,
        written: 0,
        uncached: 10,
        output: 1,
        chars: 40,
        expected: 0,
        divergence: { part: 'first', charOffset: 0 },
        cause: 'none',
        idleMs: null,
        finish: 'stop',
      })
      session.append('cache/observation', {
        purpose: '\u001b[31mred\u001b[0m',
        provider: 'p',
        model: 'm',
        cached: 0,
        written: 0,
        uncached: 10,
        output: 1,
        chars: 40,
        expected: 0,
        divergence,
        cause: 'unknown',
        idleMs: 5,
        finish: 'stop',
      })
      await ctx.sessions.flush(session)
    } finally {
      await ctx.stop()
    }
    const result = await cli(['report', join(directory, 'escapes.jsonl')])
    expect(result.code).toBe(0)
    // oxlint-disable-next-line no-control-regex -- no control character but the newlines between lines
    expect(result.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f]/)
    expect(result.stdout).toContain(
      '#2  line 2  \\u001b[31mred\\u001b[0m  unknown  10: the prompt changed without a logged reason: messages[0] (user\\u001b]0;title\\u0007) differs at character 0',
    )
  })
})

describe('warmfold report: the idle time of a break', () => {
  it("is printed only when it can explain the miss: the cause is expired, or the idle time is at least half the provider's cache TTL", async () => {
    const ctx = new Context()
    await ctx.start()
    const cases = [
      // [provider, idle ms, cause, the idle time printed or null]
      ['sim', 15_000, 'fold', null], // 15 s against the 5-minute fallback TTL says nothing
      ['sim', 600_000, 'expired', '10 min'],
      ['anthropic', 150_000, 'provider', '2.5 min'], // half of Anthropic's 5 minutes
      ['anthropic', 149_000, 'provider', null],
      ['deepseek', 30 * 60_000, 'prune', null], // 30 minutes of DeepSeek's 3 hours
      ['deepseek', 2 * 60 * 60_000, 'unknown', '2 h'],
    ] as const
    try {
      ctx.plugin(SessionStore, { store: 'file', directory })
      const session = await ctx.sessions.create('idle')
      const divergence = { part: 'message' as const, index: 0, role: 'user', charOffset: 7 }
      for (const [provider, idleMs, cause] of cases) {
        session.append('cache/observation', {
          purpose: 'conversation',
          provider,
          model: 'm',
          cached: 0,
          written: 0,
          uncached: 10,
          output: 1,
          chars: 40,
          expected: 7,
          divergence,
          cause,
          idleMs,
          finish: 'stop',
        })
      }
      await ctx.sessions.flush(session)
    } finally {
      await ctx.stop()
    }
    const result = await cli(['report', join(directory, 'idle.jsonl')])
    expect(result.code).toBe(0)
    const listed = result.stdout.split('\n').filter((line) => /^ {2}#\d+ /.test(line))
    expect(listed).toHaveLength(cases.length)
    for (const [index, [, , cause, idle]] of cases.entries()) {
      const detail = `messages[0] (user) differs at character 7; expected reusable prefix 7 of 40 characters${idle === null ? '' : `; idle ${idle} since the family's previous request`}`
      expect(listed[index]!.endsWith(`: ${detail}`), listed[index]).toBe(true)
      expect(listed[index]).toContain(` ${cause}  10: `)
    }
  })
})

describe('warmfold report: a log it cannot read is an error naming file and line', () => {
  it('a corrupt line in the middle exits 1 naming it; nothing is reported', async () => {
    const lines = (await readFile(ledgerLog, 'utf8')).split('\n')
    lines[4] = '{"seq":4,"type":'
    const file = join(directory, 'corrupt.jsonl')
    await writeFile(file, lines.join('\n'))
    const result = await cli(['report', file])
    expect(result.code).toBe(1)
    expect(result.stdout).toBe('')
    expect(result.stderr).toContain(`warmfold: cannot report ${file}:5: not valid JSON`)
    expect(result.stderr).not.toContain('    at ')
  })

  it('a torn last line exits 1 naming it, and the file is left as it was', async () => {
    const file = join(directory, 'torn.jsonl')
    const content = `${await readFile(ledgerLog, 'utf8')}{"data":{"purpose":"conv`
    await writeFile(file, content)
    const result = await cli(['report', file, '--out', join(directory, 'torn.html')])
    expect(result.code).toBe(1)
    expect(result.stderr).toContain(
      `warmfold: cannot report ${file}:${ledgerLines.length + 1}: the last line is incomplete (24 bytes without a newline)`,
    )
    expect(await readFile(file, 'utf8')).toBe(content)
    await expect(readFile(join(directory, 'torn.html'))).rejects.toMatchObject({ code: 'ENOENT' })
  })

  it('a cache/observation whose field is not what the ledger writes exits 1 naming the line and the field', async () => {
    const lines = (await readFile(ledgerLog, 'utf8')).split('\n')
    const target = ledgerLines.find((line) => line.type === 'cache/observation') as LogLine
    lines[target.line - 1] = (lines[target.line - 1] as string).replace(/"cached":\d+/, '"cached":"many"')
    const file = join(directory, 'bad-field.jsonl')
    await writeFile(file, lines.join('\n'))
    const result = await cli(['report', file])
    expect(result.code).toBe(1)
    expect(result.stderr).toContain(
      `warmfold: ${file}:${target.line}: cache event field "cached" must be a token count (an integer ≥ 0) when present, got "many"`,
    )
  })

  it.each([
    [[], 'warmfold report needs the session log to read: warmfold report SESSION.jsonl'],
    [['a.jsonl', 'b.jsonl'], 'warmfold report reads one session log, got 2: "a.jsonl" "b.jsonl"'],
    [['--bogus'], 'unknown flag "--bogus"'],
    [['x.jsonl', '--price', 'gemini'], '--price "gemini" is neither a built-in profile nor an existing file'],
    [['x.jsonl', '--out'], '--out needs a value'],
  ])('report %j exits 2 naming the problem', async (flags, message) => {
    const result = await cli(['report', ...flags])
    expect(result.code).toBe(2)
    expect(result.stderr).toContain(message)
    expect(result.stdout).toBe('')
  })

  it('a missing log or a folder exits 2; an --out in a missing folder exits 2 before the log is read', async () => {
    const missing = join(directory, 'nope.jsonl')
    expect((await cli(['report', missing])).stderr).toContain(`session log ${JSON.stringify(missing)} does not exist`)
    const folder = await cli(['report', directory])
    expect(folder.code).toBe(2)
    expect(folder.stderr).toContain('is not a file')
    const out = join(directory, 'no-such-folder', 'report.html')
    const result = await cli(['report', missing, '--out', out])
    expect(result.code).toBe(2)
    expect(result.stderr).toContain(
      `--out ${JSON.stringify(out)}: the folder ${join(directory, 'no-such-folder')} does not exist (warmfold report does not create folders; create it first)`,
    )
  })
})

describe('warmfold report --out', () => {
  it('writes one self-contained HTML page, the same bytes for the same log, and says so on stdout', async () => {
    await mkdir(join(directory, 'html'), { recursive: true })
    const out = join(directory, 'html', 'report.html')
    const result = await cli(['report', ledgerLog, '--out', out])
    expect(result.code).toBe(0)
    const observations = ledgerLines.filter((line) => line.type === 'cache/observation')
    expect(result.stdout).toBe(
      `warmfold report: wrote ${out}: ${observations.length} requests, 2 fold(s), ${observations.filter((line) => line.data.cause !== 'none').length} break(s), numbers from the cache ledger\n`,
    )
    const html = await readFile(out, 'utf8')
    expect(html.startsWith('<!doctype html>')).toBe(true)
    expect(html).toContain(
      `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">`,
    )
    // Nothing to fetch: no script, no external reference of any kind.
    expect(html).not.toMatch(/<script|<link|<img|@import|url\((?!#)|https?:\/\/(?!www\.w3\.org\/2000\/svg)/)
    await cli(['report', ledgerLog, '--out', `${out}.again`])
    expect(await readFile(`${out}.again`, 'utf8')).toBe(html)
  })

  it('--help prints the usage, and the command list names report', async () => {
    const result = await cli(['report', '--help'])
    expect(result.code).toBe(0)
    expect(result.stdout).toMatch(
      /^Usage: warmfold report SESSION\.jsonl \[--out report\.html \| --json\] \[--price P\]/,
    )
    expect((await cli(['--help'])).stdout).toContain('report         show every request')
  })
})

describe('warmfold report: the fold audit', () => {
  it("shows each fold's audit of a coding session: survival per class, the dropped items, re-work after the fold; in the text, the HTML page and --json", async () => {
    const { file, run } = await workloadSessionLog(directory, 'audit-coding', {
      window: 32_000,
      workload: 'coding',
      artifactTrail: false,
      turns: 2,
    })
    const audits = run.session.events.filter((event) => event.type === 'compaction/audit')
    expect(audits.length).toBeGreaterThan(0)
    const result = await cli(['report', file])
    expect(result.code).toBe(0)
    const section = result.stdout.split('\n\n').find((block) => block.startsWith('Fold audit'))!
    expect(section.split('\n')[0]).toBe(
      `Fold audit (${audits.length} fold(s); artifacts of the folded region the model still reads, verbatim):`,
    )
    for (const event of audits) {
      const data = event.data as unknown as {
        classes: Record<string, { seen: number; kept: number }>
        droppedTotal: number
        dropped: { class: string; text: string }[]
      }
      const row = section.split('\n').find((line) => line.startsWith(`  line ${event.seq + 1}, after request #`))!
      expect(row).toContain(`path ${data.classes.path!.kept}/${data.classes.path!.seen}`)
      expect(row).toContain('no artifact trail; after the fold: ')
      expect(row).toMatch(/after the fold: \d+ of \d+ reads repeated what the fold held/)
      expect(section).toContain(
        `dropped ${data.droppedTotal}: ${data.dropped[0]!.class} ${JSON.stringify(data.dropped[0]!.text)}`,
      )
    }
    const out = join(directory, 'audit-coding.html')
    expect((await cli(['report', file, '--out', out])).code).toBe(0)
    const html = await readFile(out, 'utf8')
    expect(html).toContain(`<section id="fold-audit"><h2>Fold audit (${audits.length})</h2>`)
    const json = JSON.parse((await cli(['report', file, '--json'])).stdout) as {
      foldAudits: { compactionId: string; droppedTotal: number; rework: unknown }[]
    }
    expect(json.foldAudits.map((audit) => audit.compactionId)).toEqual(
      audits.map((event) => (event.data as { compactionId: string }).compactionId),
    )
    expect(json.foldAudits[0]!.rework).not.toBeNull()
  })

  it('takes --json alone, not with --out', async () => {
    expect((await cli(['report', 'x.jsonl', '--json', '--out', 'y.html'])).stderr).toContain(
      '--json and --out are exclusive',
    )
  })

  it('refuses a compaction/audit it cannot read, naming the line and the field', async () => {
    const { file } = await workloadSessionLog(directory, 'audit-broken', { window: 32_000, workload: 'coding' })
    const lines = (await readFile(file, 'utf8')).split('\n')
    const at = lines.findIndex((line) => line.includes('"type":"compaction/audit"'))
    const parsed = JSON.parse(lines[at]!) as { data: { droppedTotal: unknown } }
    parsed.data.droppedTotal = -1
    lines[at] = JSON.stringify(parsed)
    await writeFile(file, lines.join('\n'))
    const result = await cli(['report', file])
    expect(result.code).not.toBe(0)
    expect(result.stderr).toContain(`${file}:${at + 1}: compaction/audit droppedTotal must be an integer ≥ 0, got -1`)
  })
})
