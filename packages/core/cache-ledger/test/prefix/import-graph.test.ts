import { readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { importGraph } from '@warmfold/test-utils'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'

const PREFIX = join(import.meta.dirname, '..', '..', 'src', 'prefix')

/** The specifiers `file` imports or re-exports at run time (type-only imports and exports left out). */
function valueImports(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest)
  const specifiers: string[] = []
  for (const statement of source.statements) {
    if (ts.isImportDeclaration(statement) && !statement.importClause?.isTypeOnly)
      specifiers.push((statement.moduleSpecifier as ts.StringLiteral).text)
    if (ts.isExportDeclaration(statement) && statement.moduleSpecifier && !statement.isTypeOnly)
      specifiers.push((statement.moduleSpecifier as ts.StringLiteral).text)
  }
  return specifiers
}

/** Every module the `/prefix` entry loads at run time: its own files, then the packages they import. */
function runtimeGraph(): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>()
  const packages = new Set<string>()
  const visit = (file: string): void => {
    if (files.has(file)) return
    files.add(file)
    for (const specifier of valueImports(file)) {
      if (specifier.startsWith('.')) visit(resolve(dirname(file), specifier))
      else packages.add(specifier)
    }
  }
  visit(join(PREFIX, 'index.ts'))
  return { files, packages }
}

describe('@warmfold/cache-ledger/prefix', () => {
  it('loads no cordis: at run time it imports only its own files and Node built-ins', () => {
    const { files, packages } = runtimeGraph()
    for (const file of files) expect(dirname(file)).toBe(PREFIX)
    expect([...packages].filter((name) => !name.startsWith('node:'))).toEqual([])
    expect(files.size).toBeGreaterThan(10)
  })

  it('names @cordisjs/core nowhere, not even in a type import, and imports nothing outside its folder', () => {
    for (const [file, specifiers] of importGraph(PREFIX)) {
      expect(specifiers, file).not.toContain('@cordisjs/core')
      for (const specifier of specifiers) expect(specifier.startsWith('../'), `${file}: ${specifier}`).toBe(false)
    }
  })
})
