import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { cliVersion, USAGE } from '../src/index.ts'
import { cli } from './run-cli.ts'

const run = promisify(execFile)
const cliRoot = resolve(import.meta.dirname, '..')
const manifest = JSON.parse(await readFile(join(cliRoot, 'package.json'), 'utf8')) as { version: string }

describe('warmfold --version', () => {
  it.each([['--version'], ['-v']])(
    '%s prints the version of @warmfold/cli from its package.json and exits 0',
    async (flag) => {
      const result = await cli([flag])
      expect(result).toEqual({ code: 0, stdout: `${manifest.version}\n`, stderr: '' })
      expect(manifest.version).toMatch(/^\d+\.\d+\.\d+/)
    },
  )

  it('--help mentions it', async () => {
    const result = await cli(['--help'])
    expect(result.code).toBe(0)
    expect(result.stdout).toContain('-v, --version')
    expect(USAGE).toMatch(/--version +print the version of @warmfold\/cli/)
  })

  it('refuses arguments after it', async () => {
    const result = await cli(['--version', 'bench'])
    expect(result.code).toBe(2)
    expect(result.stderr).toContain('--version takes no arguments, got "bench"')
  })

  it("a manifest that is missing or not the CLI's is named in the error", async () => {
    const directory = await mkdtemp(join(tmpdir(), 'warmfold-version-'))
    try {
      const module = pathToFileURL(join(directory, 'dist', 'main.js'))
      expect(() => cliVersion(module)).toThrow(
        `cannot read the version of @warmfold/cli from ${join(directory, 'package.json')}`,
      )
      await writeFile(join(directory, 'package.json'), JSON.stringify({ name: 'some-host', version: '1.0.0' }))
      expect(() => cliVersion(module)).toThrow(
        `${join(directory, 'package.json')} is not the manifest of @warmfold/cli (name "some-host", version "1.0.0")`,
      )
    } finally {
      await rm(directory, { recursive: true, force: true })
    }
  })

  it("the built entry point (tsup, the package's own config) finds the same package.json from dist", async () => {
    // Built next to `dist/` (one folder below the package, as published) so the layout is the real one;
    // declarations are skipped: they take seconds and play no part in where the code runs from.
    const outDir = await mkdtemp(join(cliRoot, '.dist-version-test-'))
    try {
      const build = `import { build } from 'tsup'; await build({ outDir: ${JSON.stringify(outDir)}, dts: false, silent: true })`
      await run(process.execPath, ['--input-type=module', '-e', build], { cwd: cliRoot })
      const { stdout } = await run(process.execPath, ['--import', 'tsx', join(outDir, 'main.js'), '--version'], {
        cwd: cliRoot,
      })
      expect(stdout).toBe(`${manifest.version}\n`)
    } finally {
      await rm(outDir, { recursive: true, force: true })
    }
  }, 60_000)
})
