import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'

const SOURCE = resolve(dirname(fileURLToPath(import.meta.url)), '../src')

/**
 * The relative imports of every file in `directory`, type-only ones included: oxlint's
 * `import/no-cycle` skips `import type`, but a type cycle still ties the files together.
 */
function importGraph(directory: string): Map<string, string[]> {
  const graph = new Map<string, string[]>()
  for (const file of readdirSync(directory).filter((name) => name.endsWith('.ts'))) {
    const { importedFiles } = ts.preProcessFile(readFileSync(join(directory, file), 'utf8'), true, true)
    graph.set(
      file,
      importedFiles.map((entry) => entry.fileName).filter((name) => name.startsWith('./')).map((name) => name.slice(2)),
    )
  }
  return graph
}

/** The first cycle found, as a path that starts and ends with the same file, or `undefined`. */
function findCycle(graph: Map<string, string[]>): string[] | undefined {
  const state = new Map<string, 'open' | 'done'>()
  const path: string[] = []
  const visit = (file: string): string[] | undefined => {
    if (state.get(file) === 'done') return undefined
    if (state.get(file) === 'open') return [...path.slice(path.indexOf(file)), file]
    state.set(file, 'open')
    path.push(file)
    for (const next of graph.get(file) ?? []) {
      const cycle = visit(next)
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

describe('agent-loop source layout', () => {
  it('has no import cycle, counting type-only imports', () => {
    const graph = importGraph(SOURCE)
    expect(graph.get('run-turn.ts')).toBeDefined()
    expect(findCycle(graph)?.join(' -> ')).toBeUndefined()
  })

  it('the cycle check finds a type-only cycle', () => {
    const graph = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts']],
    ])
    expect(findCycle(graph)).toEqual(['a.ts', 'b.ts', 'c.ts', 'a.ts'])
    const parsed = ts.preProcessFile("import type { A } from './a.ts'\nexport * from './b.ts'\n", true, true).importedFiles.map((entry) => entry.fileName)
    expect(parsed).toEqual(['./a.ts', './b.ts'])
  })
})
