import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import ts from 'typescript'

/**
 * Every import specifier (`from '…'`, `export * from '…'`, type-only ones included) of each
 * `.ts` file in `directory`, by file name: oxlint's `import/no-cycle` skips `import type`, but a
 * type cycle still ties files together.
 */
export function importGraph(directory: string): Map<string, string[]> {
  const graph = new Map<string, string[]>()
  for (const file of readdirSync(directory).filter((name) => name.endsWith('.ts'))) {
    const { importedFiles } = ts.preProcessFile(readFileSync(join(directory, file), 'utf8'), true, true)
    graph.set(
      file,
      importedFiles.map((entry) => entry.fileName),
    )
  }
  return graph
}

/**
 * The first import cycle among the files of `graph`, as a path that starts and ends with the same
 * file, or `undefined`. An import `./x.ts` is the file `x.ts`; one without a folder is taken as a
 * file name; package imports (`@scope/name`, `node:fs`) lead nowhere.
 */
export function findImportCycle(graph: ReadonlyMap<string, readonly string[]>): string[] | undefined {
  const state = new Map<string, 'open' | 'done'>()
  const path: string[] = []
  const visit = (file: string): string[] | undefined => {
    if (state.get(file) === 'done') return undefined
    if (state.get(file) === 'open') return [...path.slice(path.indexOf(file)), file]
    state.set(file, 'open')
    path.push(file)
    for (const specifier of graph.get(file) ?? []) {
      const next = specifier.startsWith('./') ? specifier.slice(2) : specifier.includes('/') ? undefined : specifier
      const cycle = next === undefined ? undefined : visit(next)
      if (cycle) return cycle
    }
    path.pop()
    state.set(file, 'done')
    return undefined
  }
  for (const file of graph.keys()) {
    const cycle = visit(file)
    if (cycle) return cycle
  }
  return undefined
}
