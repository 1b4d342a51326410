/**
 * Checks every package's public surface: each entry file its manifest's `exports` names (`.` and
 * any subpath) lists the names it exports (no `export *`), and the package README's API table lists
 * exactly those names.
 *
 *   tsx scripts/check-public-surface.ts   print every problem; exit 1 if there is one
 *
 * The README's `## API` section holds one table per entry. With several entries, each table
 * follows a `### \`<specifier>\`` heading (`### \`@warmfold/llm/adapter\``); a table before any such
 * heading is the `.` entry's. A row names its exports in backticks in its first cell
 * (`` `textBlock(text)` ``, `` `Message`, `MessageRole` ``); the leading identifier of each counts, and
 * "(also the default export)" in that cell counts as `default`.
 */
import { existsSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import ts from 'typescript'
import { workspacePackages } from './workspace-packages.ts'

const exported = (node: ts.Node): boolean =>
  ts.canHaveModifiers(node) && !!ts.getModifiers(node)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)

/** The names an entry file exports, or the problem that makes it not explicit. */
export function entryExports(code: string, file = 'index.ts'): { names: string[]; problems: string[] } {
  const source = ts.createSourceFile(file, code, ts.ScriptTarget.Latest, false)
  const names: string[] = []
  const problems: string[] = []
  for (const statement of source.statements) {
    if (ts.isExportDeclaration(statement)) {
      const clause = statement.exportClause
      if (!clause) problems.push(`${file}: \`export *\` (list the names it exports)`)
      else if (ts.isNamespaceExport(clause)) names.push(clause.name.text)
      else for (const element of clause.elements) names.push(element.name.text)
    } else if (ts.isExportAssignment(statement)) names.push('default')
    else if (ts.isVariableStatement(statement) && exported(statement)) {
      for (const declaration of statement.declarationList.declarations)
        if (ts.isIdentifier(declaration.name)) names.push(declaration.name.text)
    } else if (
      (ts.isFunctionDeclaration(statement) ||
        ts.isClassDeclaration(statement) ||
        ts.isInterfaceDeclaration(statement) ||
        ts.isTypeAliasDeclaration(statement) ||
        ts.isEnumDeclaration(statement)) &&
      exported(statement) &&
      statement.name
    )
      names.push(statement.name.text)
  }
  return { names, problems }
}

/** The names each README API table lists, by specifier (`main` is the package's own name). */
export function readmeApiTables(readme: string, main: string): Map<string, string[]> {
  const tables = new Map<string, string[]>()
  const start = readme.search(/^## API\s*$/m)
  if (start < 0) return tables
  const rest = readme.slice(start).split('\n').slice(1)
  const end = rest.findIndex((line) => line.startsWith('## '))
  let specifier = main
  for (const line of end < 0 ? rest : rest.slice(0, end)) {
    const heading = /^###\s+`([^`]+)`/.exec(line)
    if (heading) specifier = heading[1]!
    if (!line.startsWith('|') || /^\|[\s:|-]+\|?\s*$/.test(line)) continue
    const first = line.split('|')[1] ?? ''
    const names = [...first.matchAll(/`([A-Za-z_$][\w$]*)/g)].map((match) => match[1]!)
    if (!names.length) continue // the header row
    // `CacheLedger` (also the default export): the row names the entry's default export too.
    if (/\bdefault export\b/.test(first)) names.push('default')
    tables.set(specifier, [...(tables.get(specifier) ?? []), ...names])
  }
  return tables
}

/** Every problem with the public surfaces of the workspace at `root`. */
export async function publicSurfaceProblems(root: string): Promise<string[]> {
  const problems: string[] = []
  for (const pkg of await workspacePackages(root)) {
    const exportsField = pkg.manifest.exports
    if (!exportsField || typeof exportsField !== 'object') continue
    const entries = Object.entries(exportsField as Record<string, unknown>).filter(
      (pair): pair is [string, string] => typeof pair[1] === 'string' && pair[1].endsWith('.ts'),
    )
    if (!entries.length) continue
    const readmePath = join(root, pkg.folder, 'README.md')
    const tables = existsSync(readmePath)
      ? readmeApiTables(readFileSync(readmePath, 'utf8'), pkg.name)
      : new Map<string, string[]>()
    for (const [subpath, file] of entries) {
      const specifier = subpath === '.' ? pkg.name : `${pkg.name}${subpath.slice(1)}`
      const path = `${pkg.folder}/${file.replace(/^\.\//, '')}`
      const entry = entryExports(readFileSync(join(root, path), 'utf8'), path)
      problems.push(...entry.problems)
      const listed = tables.get(specifier)
      if (!listed) {
        problems.push(`${pkg.folder}/README.md: no API table for ${specifier}`)
        continue
      }
      const missing = entry.names.filter((name) => !listed.includes(name))
      const extra = listed.filter((name) => !entry.names.includes(name))
      if (missing.length) problems.push(`${pkg.folder}/README.md: ${specifier} table lacks ${missing.join(', ')}`)
      if (extra.length)
        problems.push(`${pkg.folder}/README.md: ${specifier} table lists ${extra.join(', ')}, not exported`)
    }
  }
  return problems
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const problems = await publicSurfaceProblems(resolve(import.meta.dirname, '..'))
  for (const problem of problems) console.error(problem)
  process.exitCode = problems.length ? 1 : 0
}
