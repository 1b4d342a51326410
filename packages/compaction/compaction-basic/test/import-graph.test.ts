import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const SOURCE = resolve(dirname(fileURLToPath(import.meta.url)), '../src')

/** The imports (`from '…'`, type-only ones included) of every source file: oxlint's `import/no-cycle` skips `import type`, but a type cycle still ties files together. */
function imports(): Map<string, string[]> {
  const graph = new Map<string, string[]>()
  for (const file of readdirSync(SOURCE).filter((name) => name.endsWith('.ts'))) {
    graph.set(file, [...readFileSync(join(SOURCE, file), 'utf8').matchAll(/\bfrom '([^']+)'/g)].map((match) => match[1]!))
  }
  return graph
}

function findCycle(graph: Map<string, string[]>): string[] | undefined {
  const state = new Map<string, 'open' | 'done'>()
  const path: string[] = []
  const visit = (file: string): string[] | undefined => {
    if (state.get(file) === 'done') return undefined
    if (state.get(file) === 'open') return [...path.slice(path.indexOf(file)), file]
    state.set(file, 'open')
    path.push(file)
    for (const next of graph.get(file) ?? []) {
      const cycle = next.startsWith('./') ? visit(next.slice(2)) : undefined
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

describe('compaction-basic source layout', () => {
  it('has no import cycle, counting type-only imports', () => {
    const graph = imports()
    expect(graph.get('compaction-transaction.ts')).toContain('./fold-auditor.ts')
    expect(findCycle(graph)?.join(' -> ')).toBeUndefined()
    expect(findCycle(new Map([['a.ts', ['./b.ts']], ['b.ts', ['./a.ts']]]))).toEqual(['a.ts', 'b.ts', 'a.ts'])
  })

  it('reaches the fold audit only through the fold auditor and its config (how to fold), never from a trigger (when to fold)', () => {
    const users = [...imports()].filter(([, from]) => from.includes('@warmfold/fold-audit')).map(([file]) => file).toSorted()
    expect(users).toEqual(['fold-audit-config.ts', 'fold-auditor.ts'])
  })
})
