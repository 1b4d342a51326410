import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { buildOrder, buildPackages, formatDuration } from '../build-packages.ts'
import { workspacePackages } from '../workspace-packages.ts'

let root: string
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'warmfold-build-test-'))
})
afterEach(() => rm(root, { recursive: true, force: true }))

/** A build script that fails unless every folder in `needs` has been built, then marks its own folder built. */
const script = (needs: string[] = []) =>
  `node -e "const fs = require('fs'); for (const f of ${JSON.stringify(needs).replaceAll('"', "'")}) ` +
  `if (!fs.existsSync(f + '/dist/built')) { console.error('not built yet: ' + f); process.exit(3) } ` +
  `fs.mkdirSync('dist', { recursive: true }); fs.writeFileSync('dist/built', '')"`

async function addPackage(folder: string, name: string, manifest: Record<string, unknown> = {}): Promise<void> {
  await mkdir(join(root, folder), { recursive: true })
  await writeFile(join(root, folder, 'package.json'), JSON.stringify({ name, version: '1.0.0', ...manifest }))
}

/** A clock that moves 1.5 s at each reading. */
function steppingClock(): () => number {
  let time = 0
  return () => (time += 1500)
}

describe('building the workspace packages (pnpm pack-packages, pnpm consumer-test)', () => {
  it('builds each package after those it depends on and prints a line per package with its time and the time in all', async () => {
    // Folder order is the reverse of the dependency order: z depends on m, m on a-first.
    await addPackage('packages/core/z', '@fake/z', {
      scripts: { build: script(['../../lib/m']) },
      dependencies: { '@fake/m': 'workspace:*' },
    })
    await addPackage('packages/lib/m', '@fake/m', {
      scripts: { build: script(['../../tools/a-first']) },
      peerDependencies: { '@fake/a-first': 'workspace:*', 'left-pad': '1' },
    })
    await addPackage('packages/tools/a-first', '@fake/a-first', { scripts: { build: script() } })
    await addPackage('packages/tools/no-build', '@fake/no-build')
    const lines: string[] = []
    await buildPackages(root, { log: (line) => lines.push(line), now: steppingClock(), concurrency: 1 })
    expect(lines).toEqual([
      'building 3 packages, 1 at a time, each after the workspace packages it depends on',
      '  @fake/a-first: building (packages/tools/a-first)',
      '  [1/3] @fake/a-first: built in 1.5 s (4.5 s in all)',
      '  @fake/m: building (packages/lib/m)',
      '  [2/3] @fake/m: built in 1.5 s (9.0 s in all)',
      '  @fake/z: building (packages/core/z)',
      '  [3/3] @fake/z: built in 1.5 s (13.5 s in all)',
      'built 3 packages in 15.0 s',
    ])
  })

  it('runs independent builds side by side but never a package before its dependencies', async () => {
    await addPackage('packages/a/one', '@fake/one', { scripts: { build: script() } })
    await addPackage('packages/a/two', '@fake/two', { scripts: { build: script() } })
    await addPackage('packages/b/both', '@fake/both', {
      scripts: { build: script(['../../a/one', '../../a/two']) },
      devDependencies: { '@fake/one': 'workspace:*', '@fake/two': 'workspace:*' },
    })
    const lines: string[] = []
    await buildPackages(root, { log: (line) => lines.push(line), concurrency: 2 })
    expect(lines.slice(1, 3)).toEqual([
      '  @fake/one: building (packages/a/one)',
      '  @fake/two: building (packages/a/two)',
    ])
    expect(lines.findIndex((line) => line.includes('@fake/both: building'))).toBeGreaterThan(
      Math.max(...['one', 'two'].map((name) => lines.findIndex((line) => line.includes(`@fake/${name}: built in`)))),
    )
    expect(lines.at(-1)).toMatch(/^built 3 packages in \d+\.\d s$/)
  })

  it('stops at a failing build, naming the package, its exit code and the end of its output', async () => {
    await addPackage('packages/a/first', '@fake/first', {
      scripts: { build: 'echo compiling; echo "error TS2322" >&2; exit 7' },
    })
    await addPackage('packages/b/later', '@fake/later', {
      scripts: { build: script() },
      dependencies: { '@fake/first': 'workspace:*' },
    })
    const lines: string[] = []
    await expect(buildPackages(root, { log: (line) => lines.push(line), concurrency: 1 })).rejects.toThrow(
      'the build of @fake/first (packages/a/first) failed (exit code 7):\ncompiling\nerror TS2322',
    )
    expect(lines.some((line) => line.includes('@fake/later'))).toBe(false)
  })

  it('refuses a dependency cycle naming its packages', async () => {
    await addPackage('packages/a/x', '@fake/x', { scripts: { build: 'true' }, dependencies: { '@fake/y': '*' } })
    await addPackage('packages/a/y', '@fake/y', { scripts: { build: 'true' }, dependencies: { '@fake/x': '*' } })
    expect(() => buildOrder([])).not.toThrow()
    await expect(workspacePackages(root).then(buildOrder)).rejects.toThrow(
      'the workspace packages @fake/x, @fake/y depend on each other in a cycle: none can build first',
    )
  })

  it('the real workspace builds every package with a build script, the contracts before their implementations', async () => {
    const order = buildOrder(await workspacePackages(join(import.meta.dirname, '../..'))).map(({ entry }) => entry.name)
    expect(order.length).toBeGreaterThanOrEqual(19)
    expect(order.indexOf('@warmfold/llm')).toBeLessThan(order.indexOf('@warmfold/llm-anthropic'))
    expect(order.indexOf('@warmfold/compaction')).toBeLessThan(order.indexOf('@warmfold/compaction-basic'))
    expect(order.indexOf('@warmfold/prefix-cache-testkit')).toBeLessThan(order.indexOf('@warmfold/cli'))
  })

  it('formats durations in seconds, then minutes', () => {
    expect([0, 1234, 59_940, 60_000, 305_400].map(formatDuration)).toEqual([
      '0.0 s',
      '1.2 s',
      '59.9 s',
      '1 min 00 s',
      '5 min 05 s',
    ])
  })
})
