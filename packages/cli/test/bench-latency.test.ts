import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { LATENCY_PROFILES } from '@warmfold/prefix-cache-testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { BenchReport } from '../src/index.ts'
import { BENCH_USAGE, parseBenchArgs } from '../src/index.ts'
import { cli } from './run-cli.ts'

let directory: string
beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'warmfold-latency-'))
})
afterAll(async () => {
  await rm(directory, { recursive: true, force: true })
})

/** A latency file written as `text` (so numbers JSON.parse cannot keep, like 1e999, stay as written). */
async function latencyFile(name: string, text: string): Promise<string> {
  const file = join(directory, name)
  await writeFile(file, text)
  return file
}

const figures = (decode: string) =>
  `{ "ttftMs": 400, "prefillTokensPerSecond": 8000, "cachedTokensPerSecond": 120000, "decodeTokensPerSecond": ${decode} }`

describe('warmfold bench --latency', () => {
  it('records sonnet-class unless told otherwise, takes a built-in name or a JSON file, and lists the profiles in its help', async () => {
    expect(parseBenchArgs([]).latency).toBe(LATENCY_PROFILES['sonnet-class'])
    expect(parseBenchArgs(['--latency', 'opus-class']).latency).toBe(LATENCY_PROFILES['opus-class'])
    expect(parseBenchArgs(['--latency=llama-cpp-local']).latency).toBe(LATENCY_PROFILES['llama-cpp-local'])
    const file = await latencyFile('mine.json', figures('60'))
    expect(parseBenchArgs(['--latency', file]).latency).toEqual({
      name: file,
      ttftMs: 400,
      prefillTokensPerSecond: 8000,
      cachedTokensPerSecond: 120_000,
      decodeTokensPerSecond: 60,
    })
    expect(BENCH_USAGE).toContain(
      '--latency P           how long requests take: sonnet-class | opus-class | llama-cpp-local | a JSON file',
    )
    expect(BENCH_USAGE).toContain('--background-fold on|off')
  })

  it.each([
    ['0', '"decodeTokensPerSecond" is 0, below 0.01; it must be a number of tokens per second from 0.01 to 100000000'],
    [
      '-60',
      '"decodeTokensPerSecond" is -60, below 0.01; it must be a number of tokens per second from 0.01 to 100000000',
    ],
    [
      '1e308',
      '"decodeTokensPerSecond" is 1e308, above 100000000; it must be a number of tokens per second from 0.01 to 100000000',
    ],
    [
      '1e999',
      '"decodeTokensPerSecond" is 1e999, which is out of range (not a finite number); it must be a number of tokens per second from 0.01 to 100000000',
    ],
    [
      '-1E+999',
      '"decodeTokensPerSecond" is -1E+999, which is out of range (not a finite number); it must be a number of tokens per second from 0.01 to 100000000',
    ],
  ])(
    'a file whose decode rate is %s exits 2 naming the file, the key and the value as written',
    async (decode, message) => {
      const file = await latencyFile(`decode-${decode}.json`, figures(decode))
      const result = await cli(['bench', '--latency', file])
      expect(result.code).toBe(2)
      expect(result.stderr).toBe(`warmfold: --latency file ${JSON.stringify(file)}: ${message}\n`)
      expect(result.stdout).toBe('')
    },
  )

  it('refuses a ttftMs above an hour, quoting it as written', async () => {
    const file = await latencyFile(
      'slow.json',
      '{ "ttftMs": 4e6, "prefillTokensPerSecond": 8000, "cachedTokensPerSecond": 120000, "decodeTokensPerSecond": 60 }',
    )
    const result = await cli(['bench', '--latency', file])
    expect(result.code).toBe(2)
    expect(result.stderr).toBe(
      `warmfold: --latency file ${JSON.stringify(file)}: "ttftMs" is 4e6, above 3600000; it must be a number of milliseconds from 0 to 3600000\n`,
    )
  })

  it.each([
    [
      'unknown-key.json',
      '{ "ttft": 400, "prefillTokensPerSecond": 8000, "cachedTokensPerSecond": 120000, "decodeTokensPerSecond": 60 }',
      (file: string) =>
        `--latency: latency profile ${file} has unknown key(s) "ttft"; the keys are ttftMs, prefillTokensPerSecond, cachedTokensPerSecond, decodeTokensPerSecond`,
    ],
    [
      'missing-key.json',
      '{ "ttftMs": 400, "prefillTokensPerSecond": 8000, "cachedTokensPerSecond": 120000 }',
      (file: string) =>
        `--latency: latency profile ${file} is missing "decodeTokensPerSecond" (output tokens generated per second)`,
    ],
    [
      'string.json',
      figures('"60"'),
      (file: string) =>
        `--latency: latency profile ${file}: "decodeTokensPerSecond" must be a finite number of tokens per second from 0.01 to 100000000, got "60"`,
    ],
    [
      'array.json',
      '[400, 8000, 120000, 60]',
      (file: string) =>
        `--latency: latency profile ${file} must be a JSON object with the keys ttftMs, prefillTokensPerSecond, cachedTokensPerSecond, decodeTokensPerSecond, got an array`,
    ],
    ['broken.json', '{ "ttftMs": 400,', (file: string) => `--latency file ${JSON.stringify(file)} is not valid JSON: `],
  ])('%s exits 2 naming the file and what is wrong', async (name, text, message) => {
    const file = await latencyFile(name, text)
    const result = await cli(['bench', '--latency', file])
    expect(result.code).toBe(2)
    expect(result.stderr).toContain(`warmfold: ${message(file)}`)
  })

  it('a name that is neither a profile nor a file, or a folder, exits 2 listing the profiles', async () => {
    const unknown = await cli(['bench', '--latency', 'haiku-class'])
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toBe(
      'warmfold: --latency "haiku-class" is neither a built-in profile nor an existing file; use sonnet-class | opus-class | llama-cpp-local | a JSON file\n',
    )
    const folder = join(directory, 'a-folder')
    await mkdir(folder)
    const unreadable = await cli(['bench', '--latency', folder])
    expect(unreadable.code).toBe(2)
    expect(unreadable.stderr).toBe(
      `warmfold: --latency ${JSON.stringify(folder)} is a folder, not a regular file; use sonnet-class | opus-class | llama-cpp-local | a JSON file\n`,
    )
    expect((await cli(['bench', '--latency'])).stderr).toBe('warmfold: --latency needs a value\n')
  })
})

describe('warmfold bench --background-fold', () => {
  it('is on unless turned off, and takes on or off only', async () => {
    expect(parseBenchArgs([]).backgroundFold).toBe(true)
    expect(parseBenchArgs(['--background-fold', 'off']).backgroundFold).toBe(false)
    expect(parseBenchArgs(['--background-fold=on']).backgroundFold).toBe(true)
    const refused = await cli(['bench', '--background-fold', 'maybe'])
    expect(refused.code).toBe(2)
    expect(refused.stderr).toBe('warmfold: --background-fold must be one of on, off, got "maybe"\n')
  })
})

describe('warmfold bench --prewarm', () => {
  it('is off unless turned on, takes on or off only, and is named in the title when on', async () => {
    expect(parseBenchArgs([]).prewarm).toBe(false)
    expect(parseBenchArgs(['--prewarm', 'on']).prewarm).toBe(true)
    const refused = await cli(['bench', '--prewarm', 'yes'])
    expect(refused.code).toBe(2)
    expect(refused.stderr).toBe('warmfold: --prewarm must be one of on, off, got "yes"\n')
    const on = await cli(['bench', '--windows', '4800', '--steps', '2', '--strategies', 'warmfold', '--prewarm', 'on'])
    expect(on.stdout.split('\n')[0]).toBe(
      'warmfold bench: 2 steps, effort max, pruner rewrite-only, profile bytes, price deepseek, prewarm on',
    )
  })
})

describe("the stall: each fold's wait on the latency profile's clock", () => {
  const run = ['bench', '--json', '--windows', '4800', '--steps', '30', '--strategies', 'warmfold']
  const stallOf = async (...flags: string[]) => {
    const result = await cli([...run, ...flags])
    expect(result.code).toBe(0)
    return (JSON.parse(result.stdout) as BenchReport).runs[0]!.stall!
  }

  it('a synchronous fold keeps the conversation waiting for its whole summary call, a background one does not, and a slower decode makes the call longer', async () => {
    const fast = await latencyFile('decode-80.json', figures('80'))
    const slow = await latencyFile('decode-8.json', figures('8'))
    const sync = await stallOf('--background-fold', 'off', '--latency', fast)
    expect(sync.folds.length).toBeGreaterThan(0)
    for (const fold of sync.folds) {
      expect(fold).toMatchObject({ mode: 'sync', stallSavedMs: 0 })
      expect(fold.waitedMs).toBe(fold.foldMs)
    }
    const background = await stallOf('--latency', fast)
    expect(background.folds.every((fold) => fold.mode === 'background')).toBe(true)
    expect(background.totalWaitMs).toBeLessThan(sync.totalWaitMs)
    // The summary call decodes its checkpoint: ten times slower decode, a longer fold.
    const slower = await stallOf('--background-fold', 'off', '--latency', slow)
    expect(slower.folds[0]!.foldMs).toBeGreaterThan(sync.folds[0]!.foldMs * 5)
  })
})

describe('the report records the latency profile and the background fold', () => {
  const run = ['bench', '--windows', '4800', '--steps', '2', '--strategies', 'warmfold']

  it('--json: workload.latency is the whole profile and workload.backgroundFold the flag', async () => {
    const file = await latencyFile('recorded.json', figures('60'))
    const result = await cli([...run, '--json', '--latency', file, '--background-fold', 'off'])
    expect(result.code).toBe(0)
    const report = JSON.parse(result.stdout) as BenchReport
    expect(report.workload.latency).toEqual({
      name: file,
      ttftMs: 400,
      prefillTokensPerSecond: 8000,
      cachedTokensPerSecond: 120_000,
      decodeTokensPerSecond: 60,
    })
    expect(report.workload.backgroundFold).toBe(false)
    const defaults = JSON.parse((await cli([...run, '--json'])).stdout) as BenchReport
    expect(defaults.workload).toMatchObject({ latency: LATENCY_PROFILES['sonnet-class'], backgroundFold: true })
  })

  it("the table's title names a latency profile and the background fold only when they are not the defaults", async () => {
    const chosen = await cli([...run, '--latency', 'opus-class', '--background-fold', 'off'])
    expect(chosen.code).toBe(0)
    expect(chosen.stdout.split('\n')[0]).toBe(
      'warmfold bench: 2 steps, effort max, pruner rewrite-only, profile bytes, price deepseek, latency opus-class, background fold off',
    )
    const defaults = await cli(run)
    expect(defaults.stdout.split('\n')[0]).toBe(
      'warmfold bench: 2 steps, effort max, pruner rewrite-only, profile bytes, price deepseek',
    )
  })
})
