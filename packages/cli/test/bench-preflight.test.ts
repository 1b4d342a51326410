import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BENCH_USAGE, MAX_STEPS, MAX_WINDOW, runCli } from '../src/index.ts'

// Everything that can be known before a run is checked before it: a bad value costs nothing,
// exits 2 with one message naming it, and never prints a stack or a credential.

async function cli(
  argv: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = ''
  let stderr = ''
  const code = await runCli(
    argv,
    { stdout: (text) => void (stdout += text), stderr: (text) => void (stderr += `${text}\n`) },
    env,
  )
  return { code, stdout, stderr }
}

/** Exit 2, the message, nothing run, nothing on stdout, no stack. */
function expectRefused(result: { code: number; stdout: string; stderr: string }, message: string): void {
  expect(result.code).toBe(2)
  expect(result.stderr).toContain(message)
  expect(result.stderr).not.toContain('[1/')
  expect(result.stderr).not.toMatch(/^ {4}at /m)
  expect(result.stdout).toBe('')
}

const SMALL_RUN = ['--windows', '4800', '--steps', '2', '--strategies', 'warmfold']

describe('--windows and --steps are bounded', () => {
  it.each([
    [['--windows', String(MAX_WINDOW + 1)], `--windows ${MAX_WINDOW + 1} is above the bound of ${MAX_WINDOW} tokens`],
    [['--windows', `32000,1000000000`], `--windows 1000000000 is above the bound of ${MAX_WINDOW} tokens`],
    [
      ['--windows', '4800', '--steps', String(MAX_STEPS + 1)],
      `--steps ${MAX_STEPS + 1} is above the bound of ${MAX_STEPS} steps`,
    ],
    [['--windows', '4800', '--steps', '1000000000'], `--steps 1000000000 is above the bound of ${MAX_STEPS} steps`],
  ])('bench %j exits 2 naming the value and the bound', async (flags, message) => {
    expectRefused(await cli(['bench', ...flags]), message)
  })

  it('the bounds themselves are accepted', async () => {
    const result = await cli([
      'bench',
      '--json',
      '--windows',
      `4800,${MAX_WINDOW}`,
      '--steps',
      String(MAX_STEPS),
      '--help',
    ])
    expect(result.code).toBe(0)
  })

  it('--help states the bounds', () => {
    expect(BENCH_USAGE).toContain(`each 4800 to ${MAX_WINDOW}`)
    expect(BENCH_USAGE).toContain(`1 to ${MAX_STEPS}`)
  })
})

describe('--out is checked before the run', () => {
  let directory: string
  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'warmfold-out-'))
    await writeFile(join(directory, 'a-file'), 'x')
  })
  afterAll(async () => {
    await rm(directory, { recursive: true, force: true })
  })

  it('a folder', async () => {
    expectRefused(
      await cli(['bench', ...SMALL_RUN, '--out', directory]),
      `--out ${JSON.stringify(directory)} is a folder`,
    )
  })

  it('a file in a folder that does not exist (not created)', async () => {
    const out = join(directory, 'missing', 'report.json')
    expectRefused(
      await cli(['bench', ...SMALL_RUN, '--out', out]),
      `the folder ${join(directory, 'missing')} does not exist`,
    )
    expect(await readdir(directory)).toEqual(['a-file'])
  })

  it('a file under a file', async () => {
    expectRefused(
      await cli(['bench', ...SMALL_RUN, '--out', join(directory, 'a-file', 'report.json')]),
      `${join(directory, 'a-file')} is not a folder`,
    )
  })

  it('a path that ends in a slash', async () => {
    expectRefused(await cli(['bench', ...SMALL_RUN, '--out', `${directory}/new/`]), '--out must name a file')
  })

  it('a write that fails after the run exits 1 without a stack, and the report is still on stdout', async () => {
    const result = await cli(['bench', '--json', ...SMALL_RUN, '--out', '/dev/full'])
    expect(result.code).toBe(1)
    expect(JSON.parse(result.stdout).runs).toHaveLength(1)
    expect(result.stderr).toContain('warmfold: could not write --out "/dev/full" (the report is on stdout): ENOSPC')
    expect(result.stderr).not.toMatch(/^ {4}at /m)
  })

  it('an existing file in an existing folder is overwritten', async () => {
    const out = join(directory, 'report.json')
    await mkdir(directory, { recursive: true })
    await writeFile(out, 'old')
    const result = await cli(['bench', '--json', ...SMALL_RUN, '--out', out])
    expect(result.code).toBe(0)
  })
})

describe('probe credentials and timeout', () => {
  it('credentials in the URL exit 2 without printing them', async () => {
    const result = await cli(['bench', '--cache-probe', 'https://alice:s3cr3t-pa55@api.example.test/v1', ...SMALL_RUN])
    expectRefused(
      result,
      '--cache-probe must not carry credentials (user:password@); put the API key in an environment variable and name it with --probe-key-env; got https://api.example.test/v1 with credentials',
    )
    expect(result.stderr).not.toContain('s3cr3t')
    expect(result.stderr).not.toContain('alice')
  })

  it('credentials in a URL that is not http(s) are not printed either', async () => {
    const result = await cli(['bench', '--cache-probe', 'ftp://alice:s3cr@t-pa55@files.example.test/v1', ...SMALL_RUN])
    expectRefused(
      result,
      '--cache-probe must be the http(s) base URL of the endpoint, got "ftp://…@files.example.test/v1"',
    )
    expect(result.stderr).not.toMatch(/alice|s3cr|pa55/)
  })

  it('a query in the URL exits 2 without printing it', async () => {
    const result = await cli(['bench', '--cache-probe', 'https://api.example.test/v1?api-key=s3cr3t', ...SMALL_RUN])
    expectRefused(result, '--cache-probe must be a base URL without a query or fragment')
    expect(result.stderr).not.toContain('s3cr3t')
  })

  it.each([
    ['unset', {}],
    ['empty', { WARMFOLD_BENCH_KEY: '' }],
    ['blank', { WARMFOLD_BENCH_KEY: ' \r\n' }],
  ])('a --probe-key-env variable that is %s exits 2 naming the variable', async (_how, env) => {
    const result = await cli(
      ['bench', '--cache-probe', 'http://127.0.0.1:1', '--probe-key-env', 'WARMFOLD_BENCH_KEY', ...SMALL_RUN],
      env,
    )
    expectRefused(
      result,
      '--probe-key-env names the environment variable WARMFOLD_BENCH_KEY, which is not set or is empty',
    )
  })

  it.each(['0', '-1', 'soon', '', '86401', 'Infinity'])(
    '--probe-timeout %j exits 2 naming the range',
    async (value) => {
      const result = await cli(['bench', '--cache-probe', 'http://127.0.0.1:1', '--probe-timeout', value, ...SMALL_RUN])
      expectRefused(
        result,
        `--probe-timeout must be a number of seconds from 0.001 to 86400, got ${JSON.stringify(value)}`,
      )
    },
  )

  it('--probe-timeout needs --cache-probe', async () => {
    expectRefused(
      await cli(['bench', '--probe-timeout', '5']),
      '--probe-model, --probe-dialect, --probe-key-env and --probe-timeout need --cache-probe URL',
    )
  })

  it('--help documents --probe-timeout and its default', () => {
    expect(BENCH_USAGE).toMatch(
      /--probe-timeout S +seconds to wait for each probed response, 0\.001 to 86400\s+\(default 120;/,
    )
  })
})
