/**
 * Every number the READMEs quote from `warmfold bench` (or another warmfold command), checked
 * against the command, or rewritten from it:
 *
 *   pnpm readme-numbers            # check: exit 1 listing each README line that differs
 *   pnpm readme-numbers --write    # rewrite them
 *   pnpm readme-numbers [--write] README.md packages/cli/README.md   # only these
 *
 * A README marks what is generated (see readme-numbers/markers.ts): a block after
 * `<!-- generated: warmfold bench … -->` is that command's output (`| table`: without the legend,
 * `| rows`: the table alone), or a table registered by name; a figure between
 * `<!-- figure: NAME -->` and `<!-- /figure -->` is computed from the runs its definition names
 * (readme-numbers/registry.ts). Each command runs once, in this process, whatever the number of
 * marks that use it. A figure whose sentence no longer holds (a design that was cheaper no longer
 * is) is reported, never rewritten: the sentence needs a person.
 */
import { readFile, writeFile } from 'node:fs/promises'
import { join, relative, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { formatDuration } from './build-packages.ts'
import { CommandRuns } from './readme-numbers/command-runs.ts'
import { ClaimError } from './readme-numbers/figure-kit.ts'
import type { Mark } from './readme-numbers/markers.ts'
import { blockContent, findMarks, replaceMarks } from './readme-numbers/markers.ts'
import type { Registry } from './readme-numbers/registry.ts'
import { generate } from './readme-numbers/registry.ts'
import { workspacePackages } from './workspace-packages.ts'

/** What a check or a rewrite found in one README. */
export interface ReadmeResult {
  readonly file: string
  readonly marks: number
  /** Marks whose content differs from what the command gives now (rewritten with `write`). */
  readonly stale: ReadonlyArray<{
    readonly line: number
    readonly spec: string
    readonly was: string
    readonly now: string
  }>
  /** Figures whose sentence no longer holds (never rewritten). */
  readonly claims: ReadonlyArray<{ readonly line: number; readonly spec: string; readonly message: string }>
}

/** The root README and every package README, relative to `root`. */
export async function readmeFiles(root: string): Promise<string[]> {
  return ['README.md', ...(await workspacePackages(root)).map((entry) => `${entry.folder}/README.md`)]
}

/** Checks (or, with `write`, rewrites) the marks of `files` under `root`. */
export async function readmeNumbers(
  root: string,
  files: readonly string[],
  options: { readonly write: boolean; readonly runs: CommandRuns; readonly registry?: Registry },
): Promise<ReadmeResult[]> {
  const results: ReadmeResult[] = []
  for (const file of files) {
    const path = join(root, file)
    const text = await readFile(path, 'utf8').catch(() => undefined)
    if (text === undefined) continue
    const marks = findMarks(text, file)
    if (!marks.length) continue
    const next = new Map<Mark, string>()
    const stale: Array<ReadmeResult['stale'][number]> = []
    const claims: Array<ReadmeResult['claims'][number]> = []
    for (const mark of marks) {
      let content: string
      try {
        const generated = await generate(mark, file, options.runs, options.registry)
        content = mark.kind === 'block' ? blockContent(mark.content, generated) : generated
      } catch (error) {
        if (!(error instanceof ClaimError)) throw error
        claims.push({ line: mark.line, spec: mark.spec, message: error.message })
        continue
      }
      next.set(mark, content)
      if (content !== mark.content) stale.push({ line: mark.line, spec: mark.spec, was: mark.content, now: content })
    }
    if (options.write && stale.length)
      await writeFile(
        path,
        replaceMarks(text, marks, (mark) => next.get(mark) ?? mark.content),
      )
    results.push({ file, marks: marks.length, stale, claims })
  }
  return results
}

/** The first line where `was` and `now` differ, both sides, for a message. */
export function firstDifference(was: string, now: string): string {
  const a = was.split('\n')
  const b = now.split('\n')
  const index = a.findIndex((line, at) => line !== b[at])
  const at = index < 0 ? Math.min(a.length, b.length) : index
  return `the README has ${JSON.stringify(a[at] ?? '(nothing)')}, the command gives ${JSON.stringify(b[at] ?? '(nothing)')}`
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const args = process.argv.slice(2).filter((arg) => arg !== '--')
  const write = args.includes('--write')
  const flags = args.filter((arg) => arg.startsWith('-'))
  const only = args.filter((arg) => !arg.startsWith('-'))
  const unknown = flags.filter((arg) => arg !== '--write' && arg !== '--check')
  const root = resolve(import.meta.dirname, '..')
  if (unknown.length) {
    console.error(`usage: pnpm readme-numbers [--write] [README.md …]   (unknown: ${unknown.join(' ')})`)
    process.exitCode = 2
  } else {
    const started = Date.now()
    console.error(`readme-numbers: running the commands the READMEs quote (${write ? 'rewriting' : 'checking'})`)
    const files = only.length ? only.map((file) => relative(root, resolve(file))) : await readmeFiles(root)
    const results = await readmeNumbers(root, files, {
      write,
      runs: new CommandRuns((line) => console.error(line)),
    })
    let failed = false
    for (const result of results) {
      const where = relative(root, join(root, result.file))
      for (const entry of result.stale) {
        console.log(
          `${where}:${entry.line}: ${entry.spec}: ${write ? 'rewritten' : firstDifference(entry.was, entry.now)}`,
        )
        if (!write) failed = true
      }
      for (const entry of result.claims) {
        console.log(`${where}:${entry.line}: ${entry.spec}: the sentence no longer holds, rewrite it: ${entry.message}`)
        failed = true
      }
    }
    const marks = results.reduce((sum, result) => sum + result.marks, 0)
    const stale = results.reduce((sum, result) => sum + result.stale.length, 0)
    console.error(
      `readme-numbers: ${marks} marks in ${results.length} READMEs, ${stale} ${write ? 'rewritten' : 'out of date'}` +
        ` (${formatDuration(Date.now() - started)})` +
        (failed && !write ? '; run pnpm readme-numbers --write' : ''),
    )
    if (failed) process.exitCode = 1
  }
}
