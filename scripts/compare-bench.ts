// Shows that a change kept what a host sees: runs `warmfold bench --json` for the three
// configurations issue [4.1] names, here and at another git revision (in a temporary worktree),
// and compares every field of every run: tokens, costs, folds, audits, waits. Only the CLI's
// `version` is left out. Exits 1 and lists each differing field when any differs.
//
//   tsx scripts/compare-bench.ts --against REV        bench REV and this tree, then compare
//   tsx scripts/compare-bench.ts BEFORE.json AFTER.json   compare two saved `bench --json` outputs
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'

/** The bench configurations a host's numbers come from (issue [4.1], "Done when"). */
export const BENCH_CONFIGURATIONS: ReadonlyArray<{ name: string; args: string[] }> = [
  { name: 'default', args: [] },
  {
    name: 'anthropic',
    args: ['--profile', 'anthropic', '--price', 'anthropic-5m', '--latency', 'sonnet-class'],
  },
  { name: 'coding', args: ['--workload', 'coding'] },
]

/** Every path at which `before` and `after` differ (`runs[3].summaryCalls[0].cost: 1 → 2`). */
export function benchDifferences(before: unknown, after: unknown, path = ''): string[] {
  if (Object.is(before, after)) return []
  const bothObjects = typeof before === 'object' && before !== null && typeof after === 'object' && after !== null
  if (!bothObjects || Array.isArray(before) !== Array.isArray(after))
    return [`${path || '(root)'}: ${JSON.stringify(before)} → ${JSON.stringify(after)}`]
  const keys = new Set([...Object.keys(before), ...Object.keys(after)])
  const differences: string[] = []
  for (const key of keys) {
    if (path === '' && key === 'version') continue
    const child = Array.isArray(before) ? `${path}[${key}]` : path ? `${path}.${key}` : key
    differences.push(
      ...benchDifferences((before as Record<string, unknown>)[key], (after as Record<string, unknown>)[key], child),
    )
  }
  return differences
}

function benchJson(root: string, args: readonly string[]): unknown {
  const output = execFileSync(
    'node',
    ['--import', 'tsx', join(root, 'packages/cli/src/main.ts'), 'bench', '--json', ...args],
    { cwd: root, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, stdio: ['ignore', 'pipe', 'ignore'] },
  )
  return JSON.parse(output) as unknown
}

function run(command: string, args: string[], cwd: string): void {
  execFileSync(command, args, { cwd, stdio: ['ignore', 'ignore', 'inherit'] })
}

function report(name: string, before: unknown, after: unknown): boolean {
  const differences = benchDifferences(before, after)
  const runs = (after as { runs?: unknown[] }).runs?.length ?? 0
  if (differences.length === 0) {
    console.log(`${name}: ${runs} runs, identical (every field but version)`)
    return true
  }
  console.log(`${name}: ${differences.length} field(s) differ`)
  for (const line of differences.slice(0, 50)) console.log(`  ${line}`)
  if (differences.length > 50) console.log(`  … and ${differences.length - 50} more`)
  return false
}

function main(argv: readonly string[]): number {
  if (argv[0] === '--against' && argv[1]) {
    const root = resolve(import.meta.dirname, '..')
    const worktree = mkdtempSync(join(tmpdir(), 'warmfold-bench-'))
    try {
      run('git', ['worktree', 'add', '--detach', worktree, argv[1]], root)
      run('npx', ['-y', 'pnpm@12.4.2', 'install', '--frozen-lockfile', '--prefer-offline'], worktree)
      let same = true
      for (const configuration of BENCH_CONFIGURATIONS) {
        const before = benchJson(worktree, configuration.args)
        const after = benchJson(root, configuration.args)
        same = report(`${configuration.name} (${argv[1]} → this tree)`, before, after) && same
      }
      return same ? 0 : 1
    } finally {
      execFileSync('git', ['worktree', 'remove', '--force', worktree], { cwd: root, stdio: 'ignore' })
      rmSync(worktree, { recursive: true, force: true })
    }
  }
  if (argv.length === 2) {
    const [before, after] = argv.map((file) => JSON.parse(readFileSync(file, 'utf8')) as unknown)
    return report(`${argv[0]} → ${argv[1]}`, before, after) ? 0 : 1
  }
  console.error(
    'usage: tsx scripts/compare-bench.ts --against REV | tsx scripts/compare-bench.ts BEFORE.json AFTER.json',
  )
  return 2
}

if (import.meta.url === `file://${process.argv[1]}`) process.exitCode = main(process.argv.slice(2))
