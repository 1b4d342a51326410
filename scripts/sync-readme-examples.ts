/**
 * Copies every example file into the README that shows it, between its
 * `<!-- example: examples/<file>.ts -->` and `<!-- /example -->` markers, in the root README and
 * every package README. The files are what the tests typecheck and run, so the READMEs show code
 * that works.
 *
 *   tsx scripts/sync-readme-examples.ts           rewrite the blocks from the files
 *   tsx scripts/sync-readme-examples.ts --check   change nothing; exit 1 listing every difference
 *
 * Besides blocks that differ from their files, both modes report what cannot be copied and exit
 * 1: a marker without its end, a missing file, a TypeScript block outside markers, and an
 * `examples/` file no README shows.
 */
import { writeFileSync } from 'node:fs'
import { dirname, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { checkReadme, findReadmes } from '../packages/testing/test-utils/src/readme-examples.ts'

const root = dirname(dirname(fileURLToPath(import.meta.url)))
const args = process.argv.slice(2)
const unknown = args.filter((arg) => arg !== '--check')
if (unknown.length) {
  console.error(`sync-readme-examples: unknown argument ${unknown.join(' ')}; the only flag is --check`)
  process.exit(2)
}
const check = args.includes('--check')

let failed = false
for (const readme of findReadmes(root)) {
  const { text, problems } = checkReadme(readme, root)
  // A block that differs from its file is what this script fixes; everything else needs a person.
  const blocking = check ? problems : problems.filter((problem) => problem.kind !== 'differs')
  for (const problem of blocking) console.error(problem.message)
  if (blocking.length) failed = true
  if (!check && problems.some((problem) => problem.kind === 'differs')) {
    writeFileSync(readme, text)
    console.log(`updated ${relative(root, readme)}`)
  }
}
process.exit(failed ? 1 : 0)
