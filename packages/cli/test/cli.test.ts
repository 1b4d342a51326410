import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { promisify } from 'node:util'
import { startLlamaCacheServer } from '@warmfold/llama-cache-server'
import { describe, expect, it } from 'vitest'
import type { BenchReport } from '../src/index.ts'
import { parseBenchArgs, runCli } from '../src/index.ts'

const run = promisify(execFile)
const root = resolve(import.meta.dirname, '../../..')

async function cli(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = ''
  let stderr = ''
  const code = await runCli(argv, { stdout: (text) => void (stdout += text), stderr: (text) => void (stderr += `${text}\n`) })
  return { code, stdout, stderr }
}

describe('warmfold bench flags', () => {
  it.each([
    [['--windows', '32000,abc'], '--windows must be an integer ≥ 4800, got "abc"'],
    [['--strategies', 'warmfold,hot'], '--strategies must be one of warmfold, legacy, cold, transcript, toolless, long-instruction, got "hot"'],
    [['--effort', 'ultra'], '--effort must be one of low, high, max, got "ultra"'],
    [['--pruner', 'aggressive'], '--pruner must be one of rewrite-only, default, none, got "aggressive"'],
    [['--profile', 'blocks:0'], '--profile must be one of bytes[:ttl=S] | blocks:N[:MIN][:ttl=S] | anthropic[:1h|:ttl=S] | deepseek[:ttl=S], got "blocks:0"'],
    [['--temperature', 'warm'], '--temperature must be a number ≥ 0, got "warm"'],
    [['--summary-route', 'just-a-model'], '--summary-route must be provider/model, got "just-a-model"'],
    [['--steps'], '--steps needs a value'],
    [['--bogus'], 'unknown flag "--bogus"'],
    [['--cache', 'redis'], '--cache must be one of simulator, llama, got "redis"'],
    [['--cache-probe', 'localhost:8080'], '--cache-probe must be the http(s) base URL of an OpenAI-compatible endpoint, got "localhost:8080"'],
    [['--cache', 'llama', '--cache-probe', 'http://127.0.0.1:1'], '--cache llama and --cache-probe are exclusive'],
    [['--probe-dialect', 'deepseek'], '--probe-model, --probe-dialect, --probe-key-env and --probe-timeout need --cache-probe URL'],
    [['--cache-probe', 'http://127.0.0.1:1', '--probe-dialect', 'grpc'], '--probe-dialect must be one of deepseek, openai, vllm, llamacpp, generic, got "grpc"'],
    [['--cache', 'llama', '--profile', 'anthropic'], '--profile selects a simulated cache; it cannot be combined with --cache llama'],
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
      const result = await cli(['bench', '--json', '--windows', '32000', '--steps', '40', '--strategies', 'warmfold,legacy', '--temperature', '0.5', '--stop', '</x>', '--out', out])
      expect(result.code).toBe(0)
      const report = JSON.parse(result.stdout) as BenchReport
      expect(await readFile(out, 'utf8')).toBe(result.stdout)
      expect(Object.keys(report)).toEqual(['version', 'workload', 'runs'])
      expect(report.version).toBe(1)
      expect(report.workload).toEqual({ windows: [32000], steps: 40, strategies: ['warmfold', 'legacy'], effort: 'max', temperature: 0.5, stop: ['</x>'], profile: 'bytes', pruner: 'rewrite-only', summaryRoute: null, cache: 'simulator', cacheEndpoint: null })
      expect(report.runs.map((entry) => entry.strategy)).toEqual(['warmfold', 'legacy'])
      for (const entry of report.runs) {
        expect(Object.keys(entry)).toEqual(['strategy', 'window', 'profile', 'summaryCalls', 'conversationRequests', 'sessionPromptTokens', 'sessionCachedTokens', 'sessionUncachedTokens', 'silentRewrites', 'completed'])
        expect(entry.completed).toBe(true)
        expect(entry.sessionPromptTokens).toBe(entry.sessionCachedTokens + entry.sessionUncachedTokens)
        for (const call of entry.summaryCalls) {
          expect(Object.keys(call)).toEqual(['promptTokens', 'cachedTokens', 'uncachedTokens', 'hitRatio', 'regionCoverage'])
          expect(call.uncachedTokens).toBe(call.promptTokens - call.cachedTokens)
        }
      }
      const [warm, legacy] = report.runs
      expect(warm!.summaryCalls.length).toBeGreaterThan(0)
      expect(Math.max(...warm!.summaryCalls.map((call) => call.uncachedTokens))).toBeLessThan(2000)
      expect(Math.min(...legacy!.summaryCalls.map((call) => call.uncachedTokens))).toBeGreaterThan(10000)
      expect(result.stderr).toMatch(/\[2\/2\] window 32000, strategy legacy: \d+ fold\(s\)/)
    } finally {
      await rm(directory, { recursive: true, force: true })
    }
  })

  it('--strategies accepts the peer shapes; each summary call reports its regionCoverage and the legend names each shape', async () => {
    const result = await cli(['bench', '--json', '--windows', '32000', '--steps', '30', '--strategies', 'transcript,toolless,long-instruction,warmfold'])
    expect(result.code).toBe(0)
    const report = JSON.parse(result.stdout) as BenchReport
    expect(report.runs.map((entry) => entry.strategy)).toEqual(['transcript', 'toolless', 'long-instruction', 'warmfold'])
    const coverage = Object.fromEntries(report.runs.map((entry) => [entry.strategy, entry.summaryCalls.map((call) => call.regionCoverage)]))
    for (const calls of Object.values(coverage)) expect(calls.length).toBeGreaterThan(0)
    // At this window every tool result (2,400 characters) is longer than the transcript's 2,000-character cut.
    for (const value of coverage.transcript!) expect(value).toBeGreaterThan(0.5)
    for (const value of coverage.transcript!) expect(value).toBeLessThan(1)
    for (const strategy of ['toolless', 'long-instruction', 'warmfold']) expect(coverage[strategy]!.every((value) => value === 1)).toBe(true)
    const table = await cli(['bench', '--windows', '4800', '--steps', '12', '--strategies', 'transcript,toolless,long-instruction'])
    expect(table.code).toBe(0)
    expect(table.stdout).toMatch(/^ {2}transcript +peer shape \(pi 0\.73\.1, opencode 1\.18\.33\)/m)
    expect(table.stdout).toMatch(/^ {2}toolless +peer shape \(Codex CLI 0\.171\.0, Qwen Code 0\.24\.4\)/m)
    expect(table.stdout).toMatch(/^ {2}long-instruction +peer shape \(Claude Code 2\.1\.332\)/m)
    expect(table.stdout).not.toContain('not a known strategy')
  })

  it('without --strategies the bench runs warmfold, legacy and cold, as before', () => {
    expect(parseBenchArgs([]).strategies).toEqual(['warmfold', 'legacy', 'cold'])
  })

  it('the table shows each run and the reduction against legacy', async () => {
    const result = await cli(['bench', '--windows', '32000', '--steps', '40', '--strategies', 'warmfold,legacy'])
    expect(result.code).toBe(0)
    const rows = result.stdout.split('\n').filter((line) => /^\s*32,000/.test(line))
    expect(rows).toHaveLength(2)
    expect(rows[0]).toMatch(/warmfold .*−\d+\.\d%\s+yes$/)
  })

  it('under the table, a legend explains every column and each strategy in the table', async () => {
    const result = await cli(['bench', '--windows', '4800', '--steps', '12', '--strategies', 'warmfold,cold'])
    expect(result.code).toBe(0)
    const [, legend] = result.stdout.split('\nColumns (tokens simulated, 4 characters each):\n')
    expect(legend).toBeDefined()
    const explained = legend!.split('\n').map((line) => /^ {2}(\S+(?: \S+)*?) {2,}/.exec(line)?.[1]).filter((term) => term !== undefined)
    expect(explained).toEqual(['folds', 'summary uncached', 'summary hit', 'session uncached', 'vs legacy', 'ok', 'warmfold', 'cold'])
    expect(legend).toContain('Strategies:')
    expect(legend).not.toMatch(/^ {2}legacy/m)
    expect(legend).toMatch(/ok +yes: the run completed/)
  })

  it('`pnpm warmfold bench --json` from the repository root prints only the JSON document on stdout', async () => {
    const { stdout } = await run('npx', ['-y', 'pnpm@12.4.2', 'warmfold', 'bench', '--json', '--windows', '32000', '--steps', '30', '--strategies', 'warmfold'], { cwd: root, maxBuffer: 16 * 1024 * 1024 })
    const report = JSON.parse(stdout) as BenchReport
    expect(report.runs).toHaveLength(1)
    expect(report.runs[0]!.completed).toBe(true)
  }, 60_000)

  it('--cache-probe measures with a real endpoint and --cache llama with a fresh embedded server', async () => {
    const server = await startLlamaCacheServer({ contextSize: 32768 })
    try {
      const probed = await cli(['bench', '--json', '--cache-probe', server.baseURL, '--windows', '4800', '--steps', '4', '--strategies', 'warmfold'])
      expect(probed.code).toBe(0)
      const report = JSON.parse(probed.stdout) as BenchReport
      expect(report.workload).toMatchObject({ cache: 'probe', cacheEndpoint: server.baseURL })
      const [run] = report.runs
      expect(run!.completed).toBe(true)
      // The numbers are the server's: its records add up to the reported session totals.
      expect(run!.sessionPromptTokens).toBe(server.records.reduce((sum, record) => sum + record.promptTokens, 0))
      expect(run!.sessionCachedTokens).toBe(server.records.reduce((sum, record) => sum + record.cachedTokens, 0))
    } finally {
      await server.close()
    }
    const embedded = await cli(['bench', '--json', '--cache', 'llama', '--windows', '4800', '--steps', '4', '--strategies', 'warmfold'])
    expect(embedded.code).toBe(0)
    const report = JSON.parse(embedded.stdout) as BenchReport
    expect(report.workload).toMatchObject({ cache: 'llama', windows: [4800] })
    expect(report.runs[0]!.sessionCachedTokens).toBeGreaterThan(0)
  }, 120_000)
})
