import { resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { entryExports, publicSurfaceProblems, readmeApiTables } from '../check-public-surface.ts'

const root = resolve(import.meta.dirname, '../..')

describe('public surfaces', () => {
  it('every checked package lists its exports and its README table matches them', async () => {
    expect(await publicSurfaceProblems(root)).toEqual([])
  })
})

describe('entryExports', () => {
  it('reads listed, aliased and declared exports', () => {
    const code = [
      "export type { A, B } from './a.ts'",
      "export { c, d as e } from './c.ts'",
      "export { F as default } from './f.ts'",
      'export const g = 1',
      'export function h() {}',
      'export interface I {}',
    ].join('\n')
    expect(entryExports(code)).toEqual({ names: ['A', 'B', 'c', 'e', 'default', 'g', 'h', 'I'], problems: [] })
  })

  it('refuses `export *`', () => {
    expect(entryExports("export * from './a.ts'\nexport { b } from './b.ts'", 'src/index.ts')).toEqual({
      names: ['b'],
      problems: ['src/index.ts: `export *` (list the names it exports)'],
    })
  })
})

describe('readmeApiTables', () => {
  const readme = [
    '# @warmfold/x',
    '',
    '## API',
    '',
    '| Export | Kind | What |',
    '| --- | --- | --- |',
    '| `a()` | function | uses `notListed` in prose |',
    '| `B`, `C` | type | two names |',
    '',
    '### `@warmfold/x/sub`',
    '',
    '| Export | What |',
    '| :-- | --- |',
    '| `d` | const |',
    '',
    '## Dependencies',
    '',
    '| `e` | not in the API section |',
  ].join('\n')

  it('reads the first cell of each row, by entry', () => {
    expect(Object.fromEntries(readmeApiTables(readme, '@warmfold/x'))).toEqual({
      '@warmfold/x': ['a', 'B', 'C'],
      '@warmfold/x/sub': ['d'],
    })
  })

  it('finds nothing without an API section', () => {
    expect(readmeApiTables('# x\n\n| `a` | b |\n', '@warmfold/x').size).toBe(0)
  })
})
