import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

const ROOT = join(import.meta.dirname, '..')

/** The names an index file exports (`export { a, b as c }` and `export type { … }`), `default` left out. */
function exportedNames(index: string): string[] {
  const text = readFileSync(join(ROOT, index), 'utf8')
  const names = [...text.matchAll(/export (?:type )?\{([^}]*)\}/g)].flatMap((match) =>
    (match[1] as string).split(',').map((item) =>
      (
        item
          .trim()
          .split(/\s+as\s+/)
          .at(-1) as string
      ).trim(),
    ),
  )
  return [...new Set(names.filter((name) => name && name !== 'default'))].toSorted()
}

/** The names in the first column of the README table that follows `heading`. */
function tableNames(heading: string): string[] {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
  const section = readme.slice(readme.indexOf(heading))
  const table = section.slice(section.indexOf('| export |'), section.indexOf('\n\n', section.indexOf('| export |')))
  const names = table
    .split('\n')
    .slice(2)
    .flatMap((row) => [...(row.split('|')[1] as string).matchAll(/`([A-Za-z_]\w*)/g)].map((match) => match[1]))
  return [...new Set(names as string[])].toSorted()
}

describe('README', () => {
  it('lists every export of the main entry in its API table, and nothing else', () => {
    expect(tableNames('## API')).toEqual(exportedNames('src/index.ts'))
  })

  it('lists every export of the /prefix entry in its table, and nothing else', () => {
    expect(tableNames('## The prefix model')).toEqual(exportedNames('src/prefix/index.ts'))
  })
})
