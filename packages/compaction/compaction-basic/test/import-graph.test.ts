import { readFileSync } from 'node:fs'
import { dirname, posix, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { findImportCycle as findCycle, importGraph } from '@warmfold/test-utils'
import { describe, expect, it } from 'vitest'

const SOURCE = resolve(dirname(fileURLToPath(import.meta.url)), '../src')

const FOLDERS = ['', 'config', 'fold', 'triggers']

/** The import graph of every folder of `src/`, each file and relative import named from `src/` (`fold/summarize.ts`). */
const imports = () =>
  new Map(
    FOLDERS.flatMap((folder) =>
      [...importGraph(resolve(SOURCE, folder))].map(([file, specifiers]): [string, string[]] => [
        posix.join(folder, file),
        specifiers.map((specifier) => (specifier.startsWith('.') ? `./${posix.join(folder, specifier)}` : specifier)),
      ]),
    ),
  )

describe('compaction-basic source layout', () => {
  it('has no import cycle, counting type-only imports', () => {
    const graph = imports()
    expect(graph.get('fold/fold-transaction.ts')).toContain('./fold/fold-auditor.ts')
    expect(findCycle(graph)?.join(' -> ')).toBeUndefined()
    expect(
      findCycle(
        new Map([
          ['a.ts', ['./b.ts']],
          ['b.ts', ['./a.ts']],
        ]),
      ),
    ).toEqual(['a.ts', 'b.ts', 'a.ts'])
  })

  it('reaches the fold audit only through the fold auditor and its config (how to fold), never from a trigger (when to fold)', () => {
    const users = [...imports()]
      .filter(([, from]) => from.includes('@warmfold/fold-audit'))
      .map(([file]) => file)
      .toSorted()
    expect(users).toEqual(['config/fold-audit-config.ts', 'fold/fold-auditor.ts'])
  })

  it('names what index.ts exports (no export *)', () => {
    for (const door of ['index.ts', 'engine-parts.ts']) {
      expect(readFileSync(resolve(SOURCE, door), 'utf8')).not.toMatch(/export \*/)
    }
  })
})
