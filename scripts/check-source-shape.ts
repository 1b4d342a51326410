// Keeps source files small enough to read (issue [4.1]): every `.ts` file under a package's
// `src/` has at most MAX_FILE_LINES lines, and no line there is wider than the formatter's
// width (`printWidth` in .oxfmtrc.json), which oxfmt cannot enforce on strings and comments.
// Checked by scripts/test/source-shape.test.ts; `tsx scripts/check-source-shape.ts` lists problems.
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'

/** A file under `src/` longer than this is split by concept. */
export const MAX_FILE_LINES = 300

/** The formatter's line width, read from the repository's .oxfmtrc.json. */
export function formatterWidth(root: string): number {
  const config = JSON.parse(readFileSync(join(root, '.oxfmtrc.json'), 'utf8')) as { printWidth?: unknown }
  if (typeof config.printWidth !== 'number') throw new Error(`${root}/.oxfmtrc.json: no numeric printWidth`)
  return config.printWidth
}

function sourceFiles(folder: string, inSrc: boolean): string[] {
  const files: string[] = []
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === 'dist' || entry.name.startsWith('.')) continue
    const path = join(folder, entry.name)
    if (entry.isDirectory()) files.push(...sourceFiles(path, inSrc || entry.name === 'src'))
    else if (inSrc && entry.name.endsWith('.ts')) files.push(path)
  }
  return files
}

/** Every file over {@link MAX_FILE_LINES} lines and every line over `width`, under `packages/*\/src`. */
export function sourceShapeProblems(root: string, width = formatterWidth(root)): string[] {
  const problems: string[] = []
  for (const file of sourceFiles(join(root, 'packages'), false)) {
    const name = relative(root, file)
    const lines = readFileSync(file, 'utf8').replace(/\n$/, '').split('\n')
    if (lines.length > MAX_FILE_LINES) problems.push(`${name}: ${lines.length} lines (at most ${MAX_FILE_LINES})`)
    lines.forEach((line, index) => {
      if (line.length > width) problems.push(`${name}:${index + 1}: ${line.length} characters (at most ${width})`)
    })
  }
  return problems
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const problems = sourceShapeProblems(resolve(import.meta.dirname, '..'))
  for (const problem of problems) console.error(problem)
  process.exitCode = problems.length ? 1 : 0
}
