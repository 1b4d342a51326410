import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { promisify } from 'node:util'
import { startLlamaCacheServer } from '@warmfold/llama-cache-server'
import { describe, expect, it } from 'vitest'
import type { BenchReport } from '../src/index.ts'
import { parseBenchArgs } from '../src/index.ts'
import { cli } from './run-cli.ts'

const run = promisify(execFile)
const root = resolve(import.meta.dirname, '../../..')

describe('warmfold bench flags', () => {
  it.each([
    [['--windows', '32000,abc'], '--windows must be an integer ≥ 4800, got "abc"'],
    [
      ['--strategies', 'warmfold,hot'],
      '--strategies must be one of warmfold, legacy, cold, transcript, toolless, long-instruction, got "hot"',
    ],
    [['--effort', 'ultra'], '--effort must be one of low, high, max, got "ultra"'],
    [['--pruner', 'aggressive'], '--pruner must be one of rewrite-only, default, none, got "aggressive"'],
    [
      ['--profile', 'blocks:0'],
      '--profile: cache profile "blocks:0" is not valid; use bytes[:ttl=S] | blocks:N[:MIN][:ttl=S] | anthropic[:1h|:ttl=S] | deepseek[:ttl=S] (N ≥ 1, S = seconds > 0)',
    ],
    [
      ['--profile', 'bytes:ttl=0'],
      '--profile: cache profile "bytes:ttl=0" is not valid: ttl "0" must be a positive finite number of seconds (e.g. ttl=600)',
    ],
    [['--temperature', 'warm'], '--temperature must be a number from 0 to 2, got "warm"'],
    [['--summary-route', 'just-a-model'], '--summary-route must be provider/model, got "just-a-model"'],
    [['--steps'], '--steps needs a value'],
    [['--bogus'], 'unknown flag "--bogus"'],
    [['--cache', 'redis'], '--cache must be one of simulator, llama, got "redis"'],
    [
      ['--cache-probe', 'localhost:8080'],
      '--cache-probe must be the http(s) base URL of the endpoint, got "localhost:8080"',
    ],
    [['--cache', 'llama', '--cache-probe', 'http://127.0.0.1:1'], '--cache llama and --cache-probe are exclusive'],
    [
      ['--probe-dialect', 'deepseek'],
      '--probe-model, --probe-dialect, --probe-key-env and --probe-timeout need --cache-probe URL',
    ],
    [
      ['--cache-probe', 'http://127.0.0.1:1', '--probe-dialect', 'grpc'],
      '--probe-dialect must be one of deepseek, openai, vllm, llamacpp, generic, openai-responses, anthropic, gemini, got "grpc"',
    ],
    [
      ['--cache', 'llama', '--profile', 'anthropic'],
      '--profile selects a simulated cache; it cannot be combined with --cache llama',
    ],
    [
      ['--price', 'gemini'],
      '--price "gemini" is neither a built-in profile nor an existing file; use deepseek | openai | anthropic-5m | anthropic-1h | a JSON file',
    ],
    [['--turns', '0'], '--turns must be a positive integer, got "0"'],
    [['--steps', '4', '--turns', '5'], '--turns 5 is more than --steps 4; every turn needs at least one step'],
    [['--idle', '-1'], '--idle must be a number of seconds from 0 to 2592000 (30 days), got "-1"'],
    [['--step-seconds', 'soon'], '--step-seconds must be a number of seconds from 0 to 2592000 (30 days), got "soon"'],
    [
      ['--cache', 'llama', '--price', 'anthropic-5m'],
      '--price anthropic-5m bills cache writes at 1.25× input, but --cache llama reports only cached and uncached tokens, not writes',
    ],
    [
      ['--cache-probe', 'http://127.0.0.1:1', '--price', 'openai'],
      '--price openai bills cache writes at 1.25× input, but --cache-probe with --probe-dialect llamacpp reports only cached and uncached tokens, not writes',
    ],
  ])('bench %j exits 2 naming the flag and the allowed values', async (flags, message) => {
    const result = await cli(['bench', ...flags])
    expect(result.code).toBe(2)
    expect(result.stderr).toContain(message)
    expect(result.stdout).toBe('')
  })

  it('an unknown command exits 2', async () => {
    expect((await cli(['benchmark'])).code).toBe(2)
  })
})

describe('warmfold bench output', () => {
  it('--json prints exactly the schema on stdout, progress on stderr, and --out writes the same document', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'warmfold-cli-'))
    try {
      const out = join(directory, 'report.json')
      const result = await cli([
        'bench',
        '--json',
        '--windows',
        '32000',
        '--steps',
        '40',
        '--strategies',
        'warmfold,legacy',
        '--temperature',
        '0.5',
        '--stop',
        '</x>',
        '--out',
        out,
      ])
      expect(result.code).toBe(0)
      const report = JSON.parse(result.stdout) as BenchReport
      expect(await readFile(out, 'utf8')).toBe(result.stdout)
      expect(Object.keys(report)).toEqual(['version', 'workload', 'runs'])
      expect(report.version).toBe(2)
      expect(report.workload).toEqual({
        windows: [32000],
        steps: 40,
        strategies: ['warmfold', 'legacy'],
        effort: 'max',
        temperature: 0.5,
        stop: ['</x>'],
        profile: 'bytes',
        pruner: 'rewrite-only',
        summaryRoute: null,
        cache: 'simulator',
        cacheEndpoint: null,
        price: { name: 'deepseek', cacheRead: 0.02, cacheWrite: 1, output: 4, usdPerMillionInput: 0.3 },
        latency: {
          name: 'sonnet-class',
          ttftMs: 1000,
          prefillTokensPerSecond: 50_000,
          cachedTokensPerSecond: 500_000,
          decodeTokensPerSecond: 80,
        },
        turns: 1,
        idleSeconds: 0,
        stepSeconds: 15,
        backgroundFold: true,
        prewarm: false,
        workload: 'reading',
        artifactTrail: true,
      })
      expect(report.runs.map((entry) => entry.strategy)).toEqual(['warmfold', 'legacy'])
      for (const entry of report.runs) {
        expect(Object.keys(entry)).toEqual([
          'strategy',
          'window',
          'profile',
          'summaryCalls',
          'conversationRequests',
          'sessionPromptTokens',
          'sessionCachedTokens',
          'sessionPrefilledTokens',
          'sessionUncachedTokens',
          'silentRewrites',
          'guardWarnings',
          'completed',
          'cost',
          'costUsd',
          'floor',
          'efficiency',
          'stall',
          'foldAudit',
          'requests',
        ])
        expect(entry.completed).toBe(true)
        expect(entry.sessionPromptTokens).toBe(entry.sessionCachedTokens + entry.sessionUncachedTokens)
        for (const call of entry.summaryCalls) {
          expect(Object.keys(call)).toEqual([
            'promptTokens',
            'cachedTokens',
            'prefilledTokens',
            'uncachedTokens',
            'hitRatio',
            'regionCoverage',
            'cost',
            'audit',
          ])
          expect(call.uncachedTokens).toBe(call.promptTokens - call.cachedTokens)
        }
        // Every request is in the report and the session's numbers are their sums.
        expect(entry.requests.map((request) => request.index)).toEqual(entry.requests.map((_, index) => index))
        expect(entry.requests.reduce((sum, request) => sum + request.promptTokens, 0)).toBe(entry.sessionPromptTokens)
        expect(entry.requests.reduce((sum, request) => sum + request.cachedTokens, 0)).toBe(entry.sessionCachedTokens)
        expect(
          entry.requests.filter((request) => request.purpose === 'compaction').map((request) => request.cost),
        ).toEqual(entry.summaryCalls.map((call) => call.cost))
        for (const request of entry.requests) {
          expect(Object.keys(request)).toEqual([
            'index',
            'purpose',
            'promptTokens',
            'cachedTokens',
            'cacheWriteTokens',
            'uncachedTokens',
            'outputTokens',
            'cost',
            'divergence',
          ])
          expect(request.uncachedTokens).toBe(request.promptTokens - request.cachedTokens)
          expect(typeof request.divergence.part).toBe('string')
        }
        // deepseek: plain input 1×, reads 0.02×, writes 1×, output 4×.
        const output = entry.requests.reduce((sum, request) => sum + request.outputTokens, 0)
        expect(entry.cost).toEqual({
          unit: 'input-token',
          uncachedInput: expect.any(Number),
          cacheRead: expect.any(Number),
          cacheWrite: expect.any(Number),
          output: output * 4,
          total: expect.any(Number),
        })
        expect(entry.cost.uncachedInput + entry.cost.cacheWrite).toBeCloseTo(entry.sessionUncachedTokens, 3)
        expect(entry.cost.cacheRead).toBeCloseTo(entry.sessionCachedTokens * 0.02, 3)
        expect(entry.cost.total).toBeCloseTo(
          entry.sessionUncachedTokens + entry.sessionCachedTokens * 0.02 + output * 4,
          3,
        )
        expect(entry.costUsd).toBeCloseTo((entry.cost.total * 0.3) / 1e6, 6)
        expect(entry.efficiency).toBeCloseTo(entry.floor!.total / entry.cost.total, 3)
        expect(entry.efficiency).toBeLessThanOrEqual(1)
        // One stall record per fold, on the latency profile's clock; the summary is each fold's waits.
        const stall = entry.stall!
        expect(Object.keys(stall)).toEqual([
          'folds',
          'totalWaitMs',
          'p50WaitMs',
          'p90WaitMs',
          'maxWaitMs',
          'totalStallSavedMs',
          'discardedFolds',
          'discardedCost',
        ])
        expect(stall.folds).toHaveLength(entry.summaryCalls.length)
        expect(stall.totalWaitMs).toBeCloseTo(
          stall.folds.reduce((sum, fold) => sum + fold.waitedMs, 0),
          3,
        )
        expect(stall.maxWaitMs).toBe(Math.max(...stall.folds.map((fold) => fold.waitedMs)))
        for (const fold of stall.folds) expect(fold.stallSavedMs).toBeCloseTo(fold.foldMs - fold.waitedMs, 3)
      }
      const [warm, legacy] = report.runs
      expect(warm!.summaryCalls.length).toBeGreaterThan(0)
      expect(Math.max(...warm!.summaryCalls.map((call) => call.uncachedTokens))).toBeLessThan(2000)
      expect(Math.min(...legacy!.summaryCalls.map((call) => call.uncachedTokens))).toBeGreaterThan(10000)
      // The cache ledger runs in every bench run: its guard flags each of legacy's cold summary calls, none of warmfold's.
      expect(warm!.guardWarnings).toBe(0)
      // Legacy folds on the turn's path and waits for each whole summary call; warmfold folds in the background.
      expect(
        legacy!.stall!.folds.every((fold) => fold.mode === 'sync' && fold.waitedMs === fold.foldMs && fold.foldMs > 0),
      ).toBe(true)
      expect(warm!.stall!.folds.every((fold) => fold.mode === 'background')).toBe(true)
      expect(warm!.stall!.p50WaitMs!).toBeLessThan(legacy!.stall!.p50WaitMs!)
      expect(legacy!.guardWarnings).toBe(legacy!.summaryCalls.length)
      expect(result.stderr).toMatch(/\[2\/2\] window 32000, strategy legacy: \d+ fold\(s\)/)
    } finally {
      await rm(directory, { recursive: true, force: true })
    }
  })

  it('--strategies accepts the peer shapes; each summary call reports its regionCoverage and the legend names each shape', async () => {
    const result = await cli([
      'bench',
      '--json',
      '--windows',
      '32000',
      '--steps',
      '30',
      '--strategies',
      'transcript,toolless,long-instruction,warmfold',
    ])
    expect(result.code).toBe(0)
    const report = JSON.parse(result.stdout) as BenchReport
    expect(report.runs.map((entry) => entry.strategy)).toEqual([
      'transcript',
      'toolless',
      'long-instruction',
      'warmfold',
    ])
    const coverage = Object.fromEntries(
      report.runs.map((entry) => [entry.strategy, entry.summaryCalls.map((call) => call.regionCoverage)]),
    )
    for (const calls of Object.values(coverage)) expect(calls.length).toBeGreaterThan(0)
    // At this window every tool result (2,400 characters) is longer than the transcript's 2,000-character cut.
    for (const value of coverage.transcript!) expect(value).toBeGreaterThan(0.5)
    for (const value of coverage.transcript!) expect(value).toBeLessThan(1)
    for (const strategy of ['toolless', 'long-instruction', 'warmfold'])
      expect(coverage[strategy]!.every((value) => value === 1)).toBe(true)
    const table = await cli([
      'bench',
      '--windows',
      '4800',
      '--steps',
      '12',
      '--strategies',
      'transcript,toolless,long-instruction',
    ])
    expect(table.code).toBe(0)
    expect(table.stdout).toMatch(/^ {2}transcript +peer shape \(pi 0\.73\.1, opencode 1\.18\.33\)/m)
    expect(table.stdout).toMatch(/^ {2}toolless +peer shape \(Codex CLI 0\.171\.0, Qwen Code 0\.24\.4\)/m)
    expect(table.stdout).toMatch(/^ {2}long-instruction +peer shape \(Claude Code 2\.1\.332\)/m)
    expect(table.stdout).not.toContain('not a known strategy')
  })

  it('without --strategies the bench runs warmfold, legacy and cold, as before', () => {
    expect(parseBenchArgs([]).strategies).toEqual(['warmfold', 'legacy', 'cold'])
  })

  it('--price takes a built-in profile or a JSON file, whose errors name the file', async () => {
    expect(parseBenchArgs(['--price', 'anthropic-1h']).price).toMatchObject({ name: 'anthropic-1h', cacheWrite: 2 })
    const directory = await mkdtemp(join(tmpdir(), 'warmfold-price-'))
    try {
      const good = join(directory, 'price.json')
      await writeFile(good, JSON.stringify({ cacheRead: 0.25, cacheWrite: 1, output: 3 }))
      expect(parseBenchArgs(['--price', good]).price).toEqual({
        name: good,
        cacheRead: 0.25,
        cacheWrite: 1,
        output: 3,
        usdPerMillionInput: null,
      })
      const broken = join(directory, 'broken.json')
      await writeFile(broken, '{"cacheRead": 0.1,')
      const refused = await cli(['bench', '--price', broken])
      expect(refused.code).toBe(2)
      expect(refused.stderr).toContain(`--price file ${JSON.stringify(broken)} is not valid JSON`)
      const wrong = join(directory, 'wrong.json')
      await writeFile(wrong, JSON.stringify({ cacheRead: 0.1, cacheWrite: 1, output: -4 }))
      expect((await cli(['bench', '--price', wrong])).stderr).toContain(
        `--price: price profile ${wrong}: "output" must be a finite number ≥ 0, got -4`,
      )
      // JSON has no infinity: 1e999 parses as Infinity; 1e308 is finite but turns every cost into Infinity. Both are refused, quoted as written.
      const out = (number: string, key = 'output') => {
        const file = join(directory, `${key}-${number}.json`)
        return writeFile(
          file,
          `{ "cacheRead": 0.1, "cacheWrite": 1, "output": ${key === 'output' ? number : 4}, "usdPerMillionInput": ${key === 'usdPerMillionInput' ? number : 2} }`,
        ).then(() => file)
      }
      const multiplier = 'a multiplier of the price of an uncached input token from 0 to 1000'
      for (const [file, message] of [
        [
          await out('1e999'),
          `"output" is 1e999, which is out of range (not a finite number); it must be ${multiplier}`,
        ],
        [await out('1e308'), `"output" is 1e308, above 1000; it must be ${multiplier}`],
        [
          await out('-1E+999'),
          `"output" is -1E+999, which is out of range (not a finite number); it must be ${multiplier}`,
        ],
        [
          await out('2.5e4', 'usdPerMillionInput'),
          '"usdPerMillionInput" is 2.5e4, above 10000; it must be dollars per million uncached input tokens from 0 to 10000',
        ],
      ] as const) {
        const result = await cli(['report', 'never-read.jsonl', '--price', file])
        expect(result.code, file).toBe(2)
        expect(result.stderr, file).toBe(`warmfold: --price file ${JSON.stringify(file)}: ${message}\n`)
      }
      // A profile without a dollar rate prints costs in input-token units.
      const table = await cli([
        'bench',
        '--price',
        good,
        '--windows',
        '4800',
        '--steps',
        '12',
        '--strategies',
        'warmfold',
      ])
      expect(table.code).toBe(0)
      expect(table.stdout).toMatch(/^ 4,800 +warmfold +\d+ .* \d[\d,]* +\d[\d,]* +- +\d\.\d\d +yes$/m)
      expect(table.stdout).not.toContain('$')
      expect(table.stdout.replace(/\s+/g, ' ')).toContain(
        `${good}: a cache read costs 0.25×, a cache write 1× and an output token 3× an uncached input token; no dollar rate`,
      )
    } finally {
      await rm(directory, { recursive: true, force: true })
    }
  })

  it('--turns, --idle and --step-seconds reach the workload and the report', async () => {
    const result = await cli([
      'bench',
      '--json',
      '--windows',
      '4800',
      '--steps',
      '12',
      '--turns',
      '3',
      '--idle',
      '600',
      '--step-seconds',
      '20',
      '--profile',
      'anthropic',
      '--strategies',
      'warmfold',
    ])
    expect(result.code).toBe(0)
    const report = JSON.parse(result.stdout) as BenchReport
    expect(report.workload).toMatchObject({ turns: 3, idleSeconds: 600, stepSeconds: 20 })
    const [entry] = report.runs
    expect(entry!.completed).toBe(true)
    // After each idle gap the whole prompt is a miss: the profile's 5-minute entries expired.
    const afterIdle = entry!.requests.filter((request) => request.divergence.part === 'expired')
    expect(afterIdle).toHaveLength(2)
    for (const request of afterIdle) expect(request.cachedTokens).toBe(0)
    const table = await cli([
      'bench',
      '--windows',
      '4800',
      '--steps',
      '12',
      '--turns',
      '3',
      '--idle',
      '600',
      '--step-seconds',
      '20',
      '--strategies',
      'warmfold',
    ])
    expect(table.stdout.split('\n')[0]).toBe(
      'warmfold bench: 12 steps, 3 turns, idle 600 s, 20 s per step, effort max, pruner rewrite-only, profile bytes, price deepseek',
    )
  })

  it('the table shows each run and the reduction against legacy', async () => {
    const result = await cli(['bench', '--windows', '32000', '--steps', '40', '--strategies', 'warmfold,legacy'])
    expect(result.code).toBe(0)
    const rows = result.stdout.split('\n').filter((line) => /^\s*32,000/.test(line))
    expect(rows).toHaveLength(2)
    expect(rows[0]).toMatch(/warmfold .* \$\d+\.\d{3} +−\d+\.\d% +\d\.\d\d +yes$/)
  })

  it('under the table, a legend explains every column and each strategy in the table', async () => {
    const result = await cli(['bench', '--windows', '4800', '--steps', '12', '--strategies', 'warmfold,cold'])
    expect(result.code).toBe(0)
    const [, legend] = result.stdout.split('\nColumns (tokens simulated, 4 characters each):\n')
    expect(legend).toBeDefined()
    const explained = legend!
      .split('\n')
      .map((line) => /^ {2}(\S+(?: \S+)*?) {2,}/.exec(line)?.[1])
      .filter((term) => term !== undefined)
    expect(explained).toEqual([
      'folds',
      'summary prefilled',
      'summary hit',
      'coverage',
      'wait s',
      'session prefilled',
      'cost',
      'vs legacy',
      'efficiency',
      'ok',
      'warmfold',
      'cold',
    ])
    expect(legend!.replace(/\s+/g, ' ')).toContain(
      'Price: deepseek: a cache read costs 0.02×, a cache write 1× and an output token 4× an uncached input token; $0.30 per million uncached input tokens Strategies:',
    )
    expect(legend).toContain('Strategies:')
    expect(legend).not.toMatch(/^ {2}legacy/m)
    expect(legend).toMatch(/ok +yes: the run completed/)
  })

  it("bench and report speak one vocabulary: a run's session prefilled is what report shows as prefilled (written + uncached) for its kept log, and the progress line prints the table's cost", async () => {
    const directory = await mkdtemp(join(tmpdir(), 'warmfold-vocabulary-'))
    try {
      const bench = await cli([
        'bench',
        '--windows',
        '4800',
        '--steps',
        '12',
        '--strategies',
        'warmfold',
        '--keep-sessions',
        directory,
      ])
      expect(bench.code).toBe(0)
      const lines = bench.stdout.split('\n')
      const header = lines.find((line) => line.includes('session prefilled'))!
      const row = lines.find((line) => /^ 4,800 +warmfold /.test(line))!
      // Right-aligned columns: a cell ends where its header ends.
      const cell = (title: string) =>
        row
          .slice(0, header.indexOf(title) + title.length)
          .split(/ {2,}/)
          .at(-1)!
          .trim()
      const prefilled = cell('session prefilled')
      expect(prefilled).toMatch(/^\d[\d,]*$/)
      const report = await cli(['report', join(directory, 'warmfold-4800.jsonl')])
      expect(report.code).toBe(0)
      const prompt =
        /^prompt {4}[\d,]+ tokens: [\d,]+ cached \([\d.]+%\), ([\d,]+) prefilled \(([\d,]+) written, ([\d,]+) uncached\)$/m.exec(
          report.stdout,
        )
      expect(prompt?.[1]).toBe(prefilled)
      expect(Number(prompt![2]!.replaceAll(',', '')) + Number(prompt![3]!.replaceAll(',', ''))).toBe(
        Number(prefilled.replaceAll(',', '')),
      )
      // The progress line on stderr: the same prefilled tokens and the cost as the table prints it (dollars under deepseek).
      expect(bench.stderr).toContain(
        `[1/1] window 4800, strategy warmfold: ${cell('folds')} fold(s), ${prefilled} prefilled tokens, cost ${cell('cost')}, `,
      )
      expect(cell('cost')).toMatch(/^\$\d+\.\d{3}$/)
    } finally {
      await rm(directory, { recursive: true, force: true })
    }
  })

  it('`pnpm warmfold bench --json` from the repository root prints only the JSON document on stdout', async () => {
    const { stdout } = await run(
      'npx',
      [
        '-y',
        'pnpm@12.4.2',
        'warmfold',
        'bench',
        '--json',
        '--windows',
        '32000',
        '--steps',
        '30',
        '--strategies',
        'warmfold',
      ],
      { cwd: root, maxBuffer: 16 * 1024 * 1024 },
    )
    const report = JSON.parse(stdout) as BenchReport
    expect(report.runs).toHaveLength(1)
    expect(report.runs[0]!.completed).toBe(true)
  }, 60_000)

  it('--cache-probe measures with a real endpoint and --cache llama with a fresh embedded server', async () => {
    const server = await startLlamaCacheServer({ contextSize: 32768 })
    try {
      const probed = await cli([
        'bench',
        '--json',
        '--cache-probe',
        server.baseURL,
        '--windows',
        '4800',
        '--steps',
        '4',
        '--strategies',
        'warmfold',
      ])
      expect(probed.code).toBe(0)
      const report = JSON.parse(probed.stdout) as BenchReport
      expect(report.workload).toMatchObject({ cache: 'probe', cacheEndpoint: server.baseURL })
      const [run] = report.runs
      expect(run!.completed).toBe(true)
      // The numbers are the server's: its records add up to the reported session totals.
      expect(run!.sessionPromptTokens).toBe(server.records.reduce((sum, record) => sum + record.promptTokens, 0))
      expect(run!.sessionCachedTokens).toBe(server.records.reduce((sum, record) => sum + record.cachedTokens, 0))
      // Priced in the endpoint's tokens; the floor counts simulated tokens, so a measured run has none.
      expect(run!.cost.total).toBeGreaterThan(0)
      expect(run!.floor).toBeNull()
      expect(run!.efficiency).toBeNull()
    } finally {
      await server.close()
    }
    const embedded = await cli([
      'bench',
      '--json',
      '--cache',
      'llama',
      '--windows',
      '4800',
      '--steps',
      '4',
      '--strategies',
      'warmfold',
    ])
    expect(embedded.code).toBe(0)
    const report = JSON.parse(embedded.stdout) as BenchReport
    expect(report.workload).toMatchObject({ cache: 'llama', windows: [4800] })
    expect(report.runs[0]!.sessionCachedTokens).toBeGreaterThan(0)
  }, 120_000)
})
