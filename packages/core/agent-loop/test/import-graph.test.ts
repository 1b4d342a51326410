import { readFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { findImportCycle as findCycle, importGraph } from '@warmfold/test-utils'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'

const SOURCE = resolve(dirname(fileURLToPath(import.meta.url)), '../src')

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
    const parsed = ts
      .preProcessFile("import type { A } from './a.ts'\nexport * from './b.ts'\n", true, true)
      .importedFiles.map((entry) => entry.fileName)
    expect(parsed).toEqual(['./a.ts', './b.ts'])
  })

  it('names what index.ts exports (no export *)', () => {
    for (const door of ['index.ts']) {
      expect(readFileSync(resolve(SOURCE, door), 'utf8')).not.toMatch(/export \*/)
    }
  })
})
