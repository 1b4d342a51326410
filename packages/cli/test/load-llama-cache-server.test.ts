import { execFile } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import { afterEach, describe, expect, it } from 'vitest'
import { RunError } from '../src/index.ts'
import { LLAMA_CACHE_SERVER_PACKAGE, loadLlamaCacheServer } from '../src/bench/load-llama-cache-server.ts'

const folders: string[] = []
afterEach(async () => {
  for (const folder of folders.splice(0)) await rm(folder, { recursive: true, force: true })
})

describe('loadLlamaCacheServer (the optional real-cache package of --cache llama)', () => {
  it('loads the package when it is installed (a dev dependency in the workspace)', async () => {
    expect(LLAMA_CACHE_SERVER_PACKAGE).toBe('@warmfold/llama-cache-server')
    // In a Node process of its own, as the CLI runs. Imported into a test worker that other files
    // share, loading it failed in two whole-suite runs (never alone): a dependency of
    // node-llama-cpp that imports `onExit` from signal-exit 4 was linked to signal-exit 3, which
    // has no such export. Which files had run in that worker before decided it; the cause inside
    // the test runner was not found.
    const loader = pathToFileURL(resolve(import.meta.dirname, '../src/bench/load-llama-cache-server.ts')).href
    const script = `const { loadLlamaCacheServer } = await import(${JSON.stringify(loader)}); const module = await loadLlamaCacheServer(); console.log(typeof module.startLlamaCacheServer)`
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '--eval', script],
      { cwd: resolve(import.meta.dirname, '../../..') },
    )
    expect(stdout.trim()).toBe('function')
  })

  it('names the package and the command to install it when it is missing', async () => {
    const error = await loadLlamaCacheServer('@warmfold/not-installed-anywhere').catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(RunError)
    expect((error as RunError).message).toBe(
      '--cache llama needs the optional package @warmfold/not-installed-anywhere (node-llama-cpp with a prebuilt llama.cpp), which is not installed: npm install @warmfold/not-installed-anywhere',
    )
    expect((error as RunError).cause).toMatchObject({ code: 'ERR_MODULE_NOT_FOUND' })
  })

  it('quotes the real failure when the package is there but one of its own imports is missing', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'warmfold-llama-load-'))
    folders.push(folder)
    const entry = join(folder, 'entry.mjs')
    await writeFile(
      entry,
      "import 'node-llama-cpp-that-is-not-installed'\nexport const startLlamaCacheServer = () => {}\n",
    )
    const specifier = pathToFileURL(entry).href
    const error = await loadLlamaCacheServer(specifier).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(RunError)
    expect((error as RunError).message).toContain(
      `--cache llama: ${specifier} is installed but failed to load: Cannot find package 'node-llama-cpp-that-is-not-installed'`,
    )
    expect((error as RunError).message).not.toContain('npm install')
  })
})
