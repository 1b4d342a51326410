// The two rules that keep each package's door narrow (issue [4.1], item 9), checked by
// scripts/test/package-boundaries.test.ts:
// - no file under packages/ reaches another package's `src/` by a relative path (an import, or a
//   module path handed to a child process or a config): packages meet through their names;
// - an LLM adapter depends (dev or not) only on @warmfold/llm, @warmfold/test-utils and
//   third-party packages: its end-to-end suites under the agent loop and the engine live in the
//   private @warmfold/integration package;
// - every workspace dependency (dev and peer included) points down the layers of
//   docs/ARCHITECTURE.md (or stays on its layer), so no test reaches a layer above its package.
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve, sep } from 'node:path'
import type { WorkspacePackage } from './workspace-packages.ts'
import { workspacePackages } from './workspace-packages.ts'

/** A relative path in one package's file that lands in another package's `src/`. */
export interface SourceReach {
  /** The file, relative to the repository root (`packages/core/cache-ledger/bench/x.ts`). */
  readonly file: string
  readonly line: number
  /** The path as written (`../../../testing/prefix-cache-testkit/src/index.ts`). */
  readonly path: string
  /** The package whose `src/` it lands in. */
  readonly reaches: string
}

/** Folders never searched: installed packages, build output, hidden folders. */
const SKIPPED = new Set(['node_modules', 'dist'])
const SOURCE_FILE = /\.(?:[cm]?[jt]s|tsx)$/
/** A quoted string that starts with `./` or `../` (imports, `resolve(import.meta.dirname, …)`, config paths). */
const RELATIVE_PATH = /(['"`])(\.\.?\/[^'"`\n]*)\1/g

function sourceFiles(root: string, folder: string): string[] {
  return readdirSync(join(root, folder), { withFileTypes: true }).flatMap((entry) => {
    if (entry.name.startsWith('.') || SKIPPED.has(entry.name)) return []
    const path = `${folder}/${entry.name}`
    if (entry.isDirectory()) return sourceFiles(root, path)
    return entry.isFile() && SOURCE_FILE.test(entry.name) ? [path] : []
  })
}

/** The package whose folder holds `path` (relative to the root, with `/`), if any. */
function ownerOf(packages: readonly WorkspacePackage[], path: string): WorkspacePackage | undefined {
  return packages.find((entry) => path === entry.folder || path.startsWith(`${entry.folder}/`))
}

/** Every relative path, in any source file under `packages/` of `root`, that lands in another package's `src/`. */
export async function sourceReaches(root: string): Promise<SourceReach[]> {
  const packages = await workspacePackages(root)
  const reaches: SourceReach[] = []
  for (const file of sourceFiles(root, 'packages')) {
    const owner = ownerOf(packages, file)
    const text = readFileSync(join(root, file), 'utf8')
    for (const match of text.matchAll(RELATIVE_PATH)) {
      const path = match[2]!
      const target = relative(root, resolve(root, dirname(file), path))
        .split(sep)
        .join('/')
      const reached = ownerOf(packages, target)
      if (reached === undefined || reached === owner) continue
      if (!`${target}/`.startsWith(`${reached.folder}/src/`)) continue
      const line = text.slice(0, match.index).split('\n').length
      reaches.push({ file, line, path, reaches: reached.name })
    }
  }
  return reaches
}

/** What an adapter may depend on among the workspace's packages. */
export const ADAPTER_WORKSPACE_DEPENDENCIES: readonly string[] = ['@warmfold/llm', '@warmfold/test-utils']
const DEPENDENCY_FIELDS = ['dependencies', 'devDependencies', 'peerDependencies', 'optionalDependencies'] as const

/** `@warmfold/llm-…` packages (the LLM adapters; `@warmfold/llm` itself is their contract). */
export function isAdapter(entry: WorkspacePackage): boolean {
  return entry.name.startsWith('@warmfold/llm-')
}

/** Each dependency of an adapter on a workspace package other than {@link ADAPTER_WORKSPACE_DEPENDENCIES}, as `adapter: field name`. */
export async function adapterDependencyViolations(root: string): Promise<string[]> {
  const violations: string[] = []
  for (const entry of (await workspacePackages(root)).filter(isAdapter)) {
    for (const field of DEPENDENCY_FIELDS) {
      const dependencies = (entry.manifest[field] ?? {}) as Record<string, string>
      for (const name of Object.keys(dependencies)) {
        if (name.startsWith('@warmfold/') && !ADAPTER_WORKSPACE_DEPENDENCIES.includes(name))
          violations.push(`${entry.name}: ${field} ${name}`)
      }
    }
  }
  return violations
}

/**
 * The layers of docs/ARCHITECTURE.md, bottom first, by package name. A package may depend (in any
 * field) on its own layer and those below; `@warmfold/integration`, the private package of suites
 * that cross layers, is the top.
 */
export const LAYERS: readonly (readonly string[])[] = [
  ['@warmfold/test-utils'],
  [
    '@warmfold/llm',
    '@warmfold/llm-ai-sdk',
    '@warmfold/llm-anthropic',
    '@warmfold/llm-google',
    '@warmfold/llm-openai-compatible',
    '@warmfold/llm-openai-responses',
  ],
  [
    '@warmfold/session',
    '@warmfold/session-store-contract',
    '@warmfold/session-store-postgres',
    '@warmfold/session-store-sqlite',
  ],
  ['@warmfold/token-meter'],
  ['@warmfold/agent-loop', '@warmfold/cache-ledger'],
  ['@warmfold/compaction', '@warmfold/compaction-tool-result-pruner', '@warmfold/fold-audit'],
  ['@warmfold/compaction-basic'],
  ['@warmfold/llama-cache-server', '@warmfold/prefix-cache-testkit'],
  ['@warmfold/proxy'],
  ['@warmfold/ai-sdk'],
  ['@warmfold/cli'],
  ['@warmfold/integration'],
]

/**
 * Each workspace dependency that points up the {@link LAYERS}, as `package: field name (layer
 * a → b)`, and each workspace package that has no layer, as `package: no layer`.
 */
export async function layerViolations(root: string, layers = LAYERS): Promise<string[]> {
  const layerOf = new Map(layers.flatMap((names, layer) => names.map((name) => [name, layer] as const)))
  const violations: string[] = []
  for (const entry of await workspacePackages(root)) {
    const own = layerOf.get(entry.name)
    if (own === undefined) {
      violations.push(`${entry.name}: no layer`)
      continue
    }
    for (const field of DEPENDENCY_FIELDS) {
      for (const name of Object.keys((entry.manifest[field] ?? {}) as Record<string, string>)) {
        const theirs = layerOf.get(name)
        if (theirs !== undefined && theirs > own)
          violations.push(`${entry.name}: ${field} ${name} (layer ${own} → ${theirs})`)
      }
    }
  }
  return violations
}
