import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'

/**
 * README code examples are files, so the test suite can typecheck and run them. A README shows
 * a file between two markers, and everything between them is a copy of the file:
 *
 * ````md
 * <!-- example: examples/usage.ts -->
 * ```ts
 * …the file, verbatim…
 * ```
 * <!-- /example -->
 * ````
 *
 * The path is relative to the README's folder. The markers may be indented (inside a list
 * item); the copy then carries the same indentation.
 */
const OPEN_MARKER = /^(\s*)<!-- example: (\S+) -->\s*$/
const CLOSE_MARKER = /^\s*<!-- \/example -->\s*$/
/** A fence that opens a TypeScript block: such a block must be an example file. */
const TS_FENCE = /^\s*(`{3,}|~{3,})\s*(ts|typescript|tsx|js|javascript|mjs)\b/
const ANY_FENCE = /^\s*(`{3,}|~{3,})/

/**
 * What can be wrong with a README's examples: a block that `differs` from its file (the sync
 * script fixes it), a marker left `unclosed`, a `missing` file, an `unmarked` TypeScript block
 * that nothing checks, an `examples/` file that is `unshown`.
 */
export type ReadmeProblemKind = 'differs' | 'unclosed' | 'missing' | 'unmarked' | 'unshown'

/** One problem; `message` starts with `README:line:` and says what to do. */
export interface ReadmeProblem {
  readonly kind: ReadmeProblemKind
  readonly message: string
}

/** The README with every example block copied fresh from its file, and what was wrong. */
export interface RenderedReadme {
  /** The README text with every example block rendered from its file. */
  readonly text: string
  readonly problems: readonly ReadmeProblem[]
}

/** The example block of `content` (a file) as a README shows it, markers included. */
export function renderExampleBlock(file: string, content: string, indent = ''): string {
  const body = content
    .replace(/\r\n/g, '\n')
    .replace(/\n+$/, '')
    .split('\n')
    .map((line) => (line === '' ? '' : indent + line))
  return [
    `${indent}<!-- example: ${file} -->`,
    `${indent}\`\`\`ts`,
    ...body,
    `${indent}\`\`\``,
    `${indent}<!-- /example -->`,
  ].join('\n')
}

/**
 * Renders every example block of `readme` from its file (`readExample(path)` returns the file's
 * text, or `undefined` when there is none). Problems: a marker without its closing marker, a
 * file that does not exist, a block that differs from its file, and a TypeScript block outside
 * the markers (which nothing would check).
 *
 * @param name how problems name the README, e.g. `packages/core/session/README.md`.
 */
export function renderReadme(
  readme: string,
  name: string,
  readExample: (file: string) => string | undefined,
): RenderedReadme {
  const lines = readme.split('\n')
  const out: string[] = []
  const problems: ReadmeProblem[] = []
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index]!
    const open = OPEN_MARKER.exec(line)
    if (open) {
      const [, indent = '', file = ''] = open
      const close = lines.findIndex((candidate, at) => at > index && CLOSE_MARKER.test(candidate))
      const nextOpen = lines.findIndex((candidate, at) => at > index && OPEN_MARKER.test(candidate))
      if (close === -1 || (nextOpen !== -1 && nextOpen < close)) {
        problems.push({
          kind: 'unclosed',
          message: `${name}:${index + 1}: "<!-- example: ${file} -->" has no "<!-- /example -->" after it`,
        })
        out.push(line)
        continue
      }
      const shown = lines.slice(index, close + 1).join('\n')
      const content = readExample(file)
      if (content === undefined) {
        problems.push({ kind: 'missing', message: `${name}:${index + 1}: example file ${file} does not exist` })
        out.push(shown)
      } else {
        const rendered = renderExampleBlock(file, content, indent)
        if (rendered !== shown)
          problems.push({
            kind: 'differs',
            message:
              `${name}:${index + 1}: the block of ${file} differs from the file; run \`pnpm docs:examples\` to ` +
              `copy it`,
          })
        out.push(rendered)
      }
      index = close
      continue
    }
    const fence = ANY_FENCE.exec(line)
    if (fence) {
      if (TS_FENCE.test(line)) {
        problems.push({
          kind: 'unmarked',
          message:
            `${name}:${index + 1}: a TypeScript block outside "<!-- example: … -->" markers; make it a file in ` +
            `examples/ and show that file, so the tests typecheck and run it`,
        })
      }
      // Copy the whole fenced block, so a marker quoted inside it is not read as one.
      const marker = fence[1]!
      const end = lines.findIndex(
        (candidate, at) =>
          at > index && candidate.trim().startsWith(marker) && candidate.trim().replace(/[`~]/g, '') === '',
      )
      const last = end === -1 ? lines.length - 1 : end
      out.push(...lines.slice(index, last + 1))
      index = last
      continue
    }
    out.push(line)
  }
  return { text: out.join('\n'), problems }
}

/** The example files a README names, relative to its folder. */
export function exampleFilesOf(readme: string): string[] {
  return readme
    .split('\n')
    .map((line) => OPEN_MARKER.exec(line)?.[2])
    .filter((file): file is string => file !== undefined)
}

/**
 * Reads `readmePath` and renders it (see {@link renderReadme}); also reports `examples/` files
 * the README never shows. Problems name the README relative to `root` when given, else by its path.
 */
export function checkReadme(readmePath: string, root?: string): RenderedReadme {
  const folder = dirname(readmePath)
  const readme = readFileSync(readmePath, 'utf8')
  const name = root === undefined ? readmePath : relative(root, readmePath)
  const rendered = renderReadme(readme, name, (file) => {
    const path = resolve(folder, file)
    return existsSync(path) && statSync(path).isFile() ? readFileSync(path, 'utf8') : undefined
  })
  const shown = new Set(exampleFilesOf(readme).map((file) => resolve(folder, file)))
  const examples = join(folder, 'examples')
  const orphans = existsSync(examples)
    ? readdirSync(examples)
        .filter((file) => /\.(ts|mts)$/.test(file))
        .map((file) => join(examples, file))
        .filter((path) => !shown.has(path))
    : []
  const unshown = orphans.map((path): ReadmeProblem => ({
    kind: 'unshown',
    message: `${name}: ${relative(folder, path)} is never shown; show it between example markers or remove it`,
  }))
  return { text: rendered.text, problems: [...rendered.problems, ...unshown] }
}

/**
 * Every README of the repository at `root`: the root one and each package's
 * (`packages/<group>/<package>` or `packages/<package>`).
 */
export function findReadmes(root: string): string[] {
  const packages = join(root, 'packages')
  const folders = readdirSync(packages)
    .toSorted()
    .map((entry) => join(packages, entry))
    .filter((folder) => statSync(folder).isDirectory())
    .flatMap((folder) =>
      isPackage(folder)
        ? [folder]
        : readdirSync(folder)
            .toSorted()
            .map((child) => join(folder, child))
            .filter(isPackage),
    )
  return [root, ...folders].map((folder) => join(folder, 'README.md')).filter((readme) => existsSync(readme))
}

function isPackage(folder: string): boolean {
  return statSync(folder).isDirectory() && existsSync(join(folder, 'package.json'))
}
