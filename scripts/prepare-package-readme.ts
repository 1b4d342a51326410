/**
 * The README a package publishes. A package README in the repository links to its neighbours
 * with relative paths and ends with a `## Testing` section about the repository's own tests;
 * on the registry those links break and that section means nothing. `prepack` swaps in the
 * published form and keeps the source beside it; `postpack` puts the source back.
 *
 *   tsx scripts/prepare-package-readme.ts prepack|postpack     (run in a package folder)
 */
import { existsSync } from 'node:fs'
import { readFile, rename, writeFile } from 'node:fs/promises'
import { dirname, join, posix, relative, resolve, sep } from 'node:path'
import { pathToFileURL } from 'node:url'

/** Where relative links point once the README is on the registry. */
export const REPOSITORY_URL = 'https://github.com/warmfold/warmfold'
/** The branch the absolute links name. */
export const REPOSITORY_BRANCH = 'main'
/** The source README while a packed copy stands in its place (ignored by git, never packed). */
export const SOURCE_BACKUP = '.readme-source.md'

/** Section headings (level 2) that describe the repository's tests, not the package. */
const REPOSITORY_ONLY_SECTIONS = new Set(['Testing'])

/**
 * The published form of `markdown`, the README of the package in `packageDirectory` (a path
 * relative to the repository root, with `/`): every `## Testing` section is dropped, and every
 * relative link or image, inline (`[text](target)`) or a reference definition
 * (`[id]: target`), becomes an absolute GitHub URL. Fenced code blocks and code spans are left
 * alone, and so are absolute URLs and in-page anchors.
 * @throws Error naming the link when a relative link leaves the repository.
 */
export function prepareReadme(markdown: string, packageDirectory: string): string {
  const kept: string[] = []
  let dropping = false
  for (const { line, code, heading } of markdownLines(markdown)) {
    if (heading && heading.level <= 2) dropping = heading.level === 2 && REPOSITORY_ONLY_SECTIONS.has(heading.text)
    if (dropping) continue
    kept.push(code ? line : rewriteLinks(line, (target, image) => absolute(target, packageDirectory, image)))
  }
  return `${kept.join('\n').replace(/\s+$/, '')}\n`
}

/**
 * What in `markdown` only makes sense inside the repository: `## Testing` headings and
 * relative links (outside code). Empty for a README ready for the registry.
 */
export function publishedReadmeProblems(markdown: string): string[] {
  const problems: string[] = []
  for (const { line, code, heading, number } of markdownLines(markdown)) {
    if (code) continue
    if (heading?.level === 2 && REPOSITORY_ONLY_SECTIONS.has(heading.text))
      problems.push(`line ${number}: a "## ${heading.text}" section`)
    rewriteLinks(line, (target) => {
      if (isRelative(target)) problems.push(`line ${number}: the relative link ${JSON.stringify(target)}`)
      return target
    })
  }
  return problems
}

interface MarkdownLine {
  readonly line: string
  /** 1-based. */
  readonly number: number
  /** Inside a fenced code block, or one of its fences. */
  readonly code: boolean
  readonly heading?: { readonly level: number; readonly text: string }
}

/** The lines of `markdown`, each marked as code (fenced) or a heading. */
function* markdownLines(markdown: string): Generator<MarkdownLine> {
  let fence: string | undefined
  let number = 0
  for (const line of markdown.split('\n')) {
    number++
    const fenceMatch = /^\s{0,3}(`{3,}|~{3,})(.*)$/.exec(line)
    if (fenceMatch && fence === undefined) {
      fence = fenceMatch[1]
      yield { line, number, code: true }
    } else if (fence !== undefined) {
      // A closing fence repeats the opening character at least as many times, with no info string.
      if (fenceMatch && fenceMatch[1]!.startsWith(fence) && fenceMatch[2]!.trim() === '') fence = undefined
      yield { line, number, code: true }
    } else {
      const heading = /^(#{1,6})\s+(.*?)(?:\s+#+)?\s*$/.exec(line)
      yield heading
        ? { line, number, code: false, heading: { level: heading[1]!.length, text: heading[2]! } }
        : { line, number, code: false }
    }
  }
}

/**
 * Replaces every link target of one line outside fenced code (inline links, images and
 * reference definitions) with `replace(target, image)`, leaving code spans as they are.
 */
function rewriteLinks(line: string, replace: (target: string, image: boolean) => string): string {
  const definition = /^(\s{0,3}\[[^\]]+\]:\s*)(<[^>]*>|\S+)(.*)$/.exec(line)
  if (definition) return `${definition[1]}${replace(definition[2]!, false)}${definition[3]}`
  // Code spans are set aside (as private-use placeholders) while links are rewritten: link text
  // may hold one, as in [`name`](path), and a link inside one is code, not a link.
  const spans: string[] = []
  const masked = line.replace(/(`+)[\s\S]*?(?<!`)\1(?!`)/g, (span) => `\uE000${spans.push(span) - 1}\uE001`)
  const rewritten = masked.replace(
    /(!?)\[((?:[^\]\\]|\\.)*)\]\(\s*(<[^>]*>|[^\s)]+)/g,
    (_match, bang: string, text: string, target: string) => `${bang}[${text}](${replace(target, bang === '!')}`,
  )
  return rewritten.replace(/\uE000(\d+)\uE001/g, (_match, index: string) => spans[Number(index)]!)
}

/** A target that resolves against the README's folder: not an URL, not an in-page anchor. */
function isRelative(target: string): boolean {
  const bare = target.startsWith('<') && target.endsWith('>') ? target.slice(1, -1) : target
  return !(bare === '' || bare.startsWith('#') || /^[a-z][a-z0-9+.-]*:/i.test(bare) || bare.startsWith('//'))
}

/** The absolute URL of `target` as written in the README of `packageDirectory`; absolute targets and anchors unchanged. */
function absolute(target: string, packageDirectory: string, image: boolean): string {
  if (!isRelative(target)) return target
  const bracketed = target.startsWith('<') && target.endsWith('>')
  const bare = bracketed ? target.slice(1, -1) : target
  const hashAt = bare.search(/[?#]/)
  const path = hashAt === -1 ? bare : bare.slice(0, hashAt)
  const suffix = hashAt === -1 ? '' : bare.slice(hashAt)
  const resolved = path.startsWith('/')
    ? posix.normalize(path.slice(1))
    : posix.normalize(posix.join(packageDirectory, path))
  if (resolved === '..' || resolved.startsWith('../'))
    throw new Error(`README of ${packageDirectory}: the link ${JSON.stringify(target)} points outside the repository`)
  const location = resolved === '.' ? '' : resolved
  const url = image
    ? `${REPOSITORY_URL.replace('https://github.com/', 'https://raw.githubusercontent.com/')}/${REPOSITORY_BRANCH}/${location}`
    : `${REPOSITORY_URL}/${location === '' || location.endsWith('/') ? 'tree' : 'blob'}/${REPOSITORY_BRANCH}/${location}`
  return bracketed ? `<${url}${suffix}>` : `${url}${suffix}`
}

/** Swaps the published README in for the source one in `packageFolder`, keeping the source in {@link SOURCE_BACKUP}. */
export async function prepack(packageFolder: string, repositoryRoot: string): Promise<void> {
  const readme = join(packageFolder, 'README.md')
  const backup = join(packageFolder, SOURCE_BACKUP)
  // A pack that died before its postpack left the published form in README.md: the backup is the source.
  if (existsSync(backup)) await rename(backup, readme)
  const source = await readFile(readme, 'utf8')
  const packageDirectory = relative(repositoryRoot, packageFolder).split(sep).join('/')
  const published = prepareReadme(source, packageDirectory)
  await writeFile(backup, source)
  await writeFile(readme, published)
}

/**
 * Puts the source README back in `packageFolder`.
 * @throws Error when there is no backup: `prepack` did not run, so README.md may not be the source.
 */
export async function postpack(packageFolder: string): Promise<void> {
  const backup = join(packageFolder, SOURCE_BACKUP)
  if (!existsSync(backup))
    throw new Error(
      `${backup} is missing: prepack did not run in ${packageFolder}, so its README.md was not swapped (check it against git)`,
    )
  await rename(backup, join(packageFolder, 'README.md'))
}

/**
 * The repository holding `folder`: the nearest folder upwards with a `pnpm-workspace.yaml`.
 * @throws Error when there is none.
 */
export function repositoryRootOf(folder: string): string {
  for (let current = resolve(folder); ; current = dirname(current)) {
    if (existsSync(join(current, 'pnpm-workspace.yaml'))) return current
    if (dirname(current) === current)
      throw new Error(`${folder} is not inside a pnpm workspace (no pnpm-workspace.yaml above it)`)
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const step = process.argv[2]
  if (step === 'prepack') await prepack(process.cwd(), repositoryRootOf(process.cwd()))
  else if (step === 'postpack') await postpack(process.cwd())
  else {
    console.error(`usage: tsx scripts/prepare-package-readme.ts prepack|postpack (got ${JSON.stringify(step)})`)
    process.exitCode = 2
  }
}
