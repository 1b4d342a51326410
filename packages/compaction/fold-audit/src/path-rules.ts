import { stripTrailing } from './clean-text.ts'
import { wordSet } from './word-set.ts'

/**
 * The rules that tell a file-system path from the many slash- and dot-bearing words of tool
 * output (routes, MIME types, branches, package names, method calls). They lean to precision: a
 * token becomes a path only with a sign that it is one (a known extension, a known first folder,
 * an explicit `./`, `../` or `~/`, a known root for an absolute path). See
 * `test/corpus/LABELLING.md`.
 */

/** First segments of absolute paths that are file-system roots (so `/api/users/1` is not a path, `/srv/app` is). */
const ABSOLUTE_ROOTS: ReadonlySet<string> = wordSet(`
  usr home tmp var etc opt bin sbin lib lib64 srv mnt media root run snap nix proc sys dev private
  Users Volumes Library System Applications app workspace workspaces src code repo project projects
  data build builds github runner rustc go cargo work
`)

/**
 * First folders of relative paths common enough in repositories to mark a path without an extension
 * (`src/components`).
 */
const RELATIVE_ROOTS: ReadonlySet<string> = wordSet(`
  src lib libs test tests spec specs __tests__ packages apps app node_modules dist build out target
  docs doc scripts bin config configs conf public assets internal pkg cmd crates examples tools vendor
  .github .vscode .git components pages server client services migrations fixtures include logs tmp
  coverage
`)

/**
 * Folders named as bare command arguments (`eslint src`) that are paths; `build`, `test` and `docs`
 * are left out because they are also script names (`npm run build`).
 */
const ARGUMENT_FOLDERS: ReadonlySet<string> = wordSet(`
  src lib tests packages apps scripts internal crates
`)

/** File extensions that mark a path, also a bare file name (`index.ts`). */
const EXTENSIONS: ReadonlySet<string> = wordSet(`
  ts tsx mts cts js jsx mjs cjs json jsonc json5 jsonl md mdx txt py pyi ipynb rs go mod sum java kt
  kts scala groovy gradle rb php c h cc cpp cxx hpp hh cs fs swift sh bash zsh fish ps1 bat sql css
  scss sass less html htm vue svelte astro xml yaml yml toml ini cfg conf env lock log csv tsv proto
  graphql gql prisma tf tfvars hcl properties svg png jpg jpeg gif webp ico pdf zip gz tgz tar wasm
  map snap o so dylib dll exe class jar whl lua ex exs erl csproj fsproj vbproj sln hs ml elm dart zig
  nim pl rst tex dockerfile tsbuildinfo
`)

/** Bare words with a known extension that are names of things, not files (`Node.js`, `console.log`). */
const NOT_FILE_NAMES: ReadonlySet<string> = wordSet(`
  node.js next.js nuxt.js vue.js react.js express.js three.js d3.js chart.js ember.js backbone.js
  angular.js moment.js socket.io console.log logger.log math.log
`)

/** Well-known file names without an extension. */
const KNOWN_FILE_NAMES: ReadonlySet<string> = wordSet(`
  Dockerfile Containerfile Makefile GNUmakefile LICENSE LICENCE README CHANGELOG CODEOWNERS Gemfile
  Rakefile Procfile Jenkinsfile Vagrantfile Brewfile Justfile justfile Pipfile gradlew mvnw
`)

/** The lengths of the shortest and the longest well-known file name: a word of another length is no path. */
export const KNOWN_FILE_NAME_LENGTHS: { readonly shortest: number; readonly longest: number } = Object.freeze({
  shortest: Math.min(...[...KNOWN_FILE_NAMES].map((name) => name.length)),
  longest: Math.max(...[...KNOWN_FILE_NAMES].map((name) => name.length)),
})

/** Well-known dot files and dot folders. */
const DOT_FILE = new RegExp(
  String.raw`^\.(?:env(?:\.[\w-]+)*|git(?:ignore|attributes|modules|keep)?|github|gitlab-ci\.ya?ml|` +
    String.raw`editorconfig|npmrc|nvmrc|yarnrc(?:\.ya?ml)?|prettierrc(?:\.\w+)?|prettierignore|` +
    String.raw`eslintrc(?:\.\w+)?|eslintignore|dockerignore|babelrc|vscode|idea|husky|changeset|bashrc|` +
    String.raw`zshrc|profile|ssh|config|cache|next|turbo|venv|tool-versions|python-version|node-version|` +
    String.raw`browserslistrc|stylelintrc(?:\.\w+)?|mocharc(?:\.\w+)?|swcrc)$`,
)

/** A character some path has: without one, a token is at most a well-known file name. */
const PATH_SIGN = /[./:~]/

const isDigitCode = (code: number): boolean => code >= 48 && code <= 57

/**
 * `text` without a `:line:col` position and what follows it (`text.replace(/(?::\d+)+:.*$/, '')`, then
 * `.replace(/(?::\d+)+:?$/, '')` and `.replace(/:+$/, '')`), by passes over it that never go back.
 */
export function withoutPosition(text: string): string {
  // The first `:digits` followed by a colon starts a position with what follows it.
  for (let colon = text.indexOf(':'); colon >= 0; colon = text.indexOf(':', colon + 1)) {
    let after = colon + 1
    while (isDigitCode(text.charCodeAt(after))) after++
    if (after > colon + 1 && text.charCodeAt(after) === 58) return stripTrailing(text.slice(0, colon), ':')
  }
  // Else a position that ends the text (`:12`, `:12:3`, `:12:`), read from the end.
  let start = text.length - (text.endsWith(':') ? 1 : 0)
  for (let end = start; ; start = end) {
    while (end > 0 && isDigitCode(text.charCodeAt(end - 1))) end--
    if (end === start || text.charCodeAt(end - 1) !== 58) break
    end--
  }
  return stripTrailing(start < text.length - 1 ? text.slice(0, start) : text, ':')
}

/**
 * `text` without the dots it ends with, but for a `.` or `..` segment (`.`, `a/..`): `while
 * (text.endsWith('.') && !/(?:^|\/)\.\.?$/.test(text)) text = text.slice(0, -1)`, without a search
 * of the whole text for each dot.
 */
export function withoutSentenceDots(text: string): string {
  let end = text.length
  for (; end > 0 && text.charCodeAt(end - 1) === 46; end--) {
    const segment = end >= 2 && text.charCodeAt(end - 2) === 46 ? end - 2 : end - 1
    if (segment === 0 || text.charCodeAt(segment - 1) === 47) break
  }
  return end === text.length ? text : text.slice(0, end)
}

/** `text` without the slashes it ends with, one character at least kept (`text.replace(/(.)\/+$/, '$1')`). */
export function withoutTrailingSlashes(text: string): string {
  let end = text.length
  while (end > 1 && text.charCodeAt(end - 1) === 47) end--
  return end === text.length ? text : text.slice(0, end)
}

/** Whether `name` (one segment) ends in a known file extension after a non-empty stem. */
export function hasKnownExtension(name: string): boolean {
  const dot = name.lastIndexOf('.')
  if (dot <= 0 || dot === name.length - 1) return false
  return EXTENSIONS.has(name.slice(dot + 1).toLowerCase())
}

/** Whether `name` is a well-known file or dot file without a path around it. */
export function isKnownFileName(name: string): boolean {
  return KNOWN_FILE_NAMES.has(name) || DOT_FILE.test(name)
}

/** Whether a bare command argument names a source folder (`eslint src`). */
export function isArgumentFolder(word: string): boolean {
  return ARGUMENT_FOLDERS.has(word)
}

/**
 * The path a token of a line is, normalized, or `undefined` when it is not one. `before` and
 * `after` are the characters around the token (`''` at the ends of the line).
 *
 * Normalized: without a pytest `::node` suffix, a `:line:col` position (and what a grep or a
 * stack frame writes right after it), a leading `./`, a
 * trailing `/` and trailing sentence dots.
 */
export function pathFromToken(token: string, before: string, after: string): string | undefined {
  // A glob (`src/**/*.ts`, `*.test.ts`) is a pattern, not a path.
  if (before === '*' || after === '*') return undefined
  // Most tokens are words: without a slash, a dot, a colon or a tilde, only a well-known file name
  // (`Makefile`) is a path, which is what the rules below come to for them, in a fraction of the time.
  if (!PATH_SIGN.test(token)) {
    let word = token
    while (word.endsWith('-')) word = word.slice(0, -1)
    return KNOWN_FILE_NAMES.has(word) ? word : undefined
  }
  // Many others are words that end a sentence (`done.`, `5003.`): whose only dots end them come to
  // a word without a dot, and so, by the same rules, to a well-known file name or nothing.
  if (!token.includes('/') && !token.includes(':') && !token.includes('~')) {
    let end = token.length
    while (end > 0 && token.charCodeAt(end - 1) === 46) end--
    while (end > 0 && token.charCodeAt(end - 1) === 45) end--
    if (end > 0 && token.lastIndexOf('.', end - 1) < 0) {
      const word = token.slice(0, end)
      return KNOWN_FILE_NAMES.has(word) ? word : undefined
    }
  }
  // Package managers' local specifiers (`link:../../packages/x`, `file:./vendor/y`) point at folders.
  // (Each replacement below runs only on a token holding the character it needs.)
  let text = token
  if (text.includes(':')) {
    text = text.replace(/^(?:link|file|portal):(?!\/\/)/, '')
    const nodeId = text.indexOf('::')
    if (nodeId >= 0) text = text.slice(0, nodeId)
    // A position, and whatever follows it without a space: grep's `path:12:content`, Ruby's `path:12:in`.
    text = withoutPosition(text)
    // What still holds a colon is a scheme or a reference (`node:internal/x`, `image:tag`), not a path.
    if (text.includes(':')) return undefined
  }
  text = stripTrailing(withoutSentenceDots(text), '-')
  const explicit = (text.startsWith('.') || text.startsWith('~')) && /^(?:\.\.?|~)\//.test(text)
  while (text.startsWith('./')) text = text.slice(2)
  const trailingSlash = text.length > 1 && text.endsWith('/')
  text = withoutTrailingSlashes(text)
  if (!/[A-Za-z0-9]/.test(text) || text.startsWith('@') || text.includes('//')) return undefined
  const segments = text.split('/')
  if (text.includes('..') && segments.some((segment) => segment.includes('..') && segment !== '..')) return undefined
  if (text.startsWith('/')) {
    if (text === '/dev/null') return undefined
    return ABSOLUTE_ROOTS.has(segments[1]!) || hasKnownExtension(segments.at(-1)!) ? text : undefined
  }
  if (segments.length > 1) {
    if (/^\d+$/.test(segments[0]!)) return undefined
    if (explicit || RELATIVE_ROOTS.has(segments[0]!) || hasKnownExtension(segments.at(-1)!) || trailingSlash)
      return text
    return undefined
  }
  if (explicit || isKnownFileName(text)) return text
  if (trailingSlash)
    return text.length >= 2 && /[A-Za-z]/.test(text) && (before === '' || /\s/.test(before)) ? text : undefined
  if (after === '(' || NOT_FILE_NAMES.has(text.toLowerCase())) return undefined
  return hasKnownExtension(text) ? text : undefined
}

/**
 * A path as the audit compares it: without a leading `./` or a trailing `/`, and relative to
 * `workspaceRoot` when it lies inside it (`/home/dev/app/src/a.ts` → `src/a.ts`).
 */
export function normalizePath(path: string, workspaceRoot?: string): string {
  let text = path.trim()
  while (text.startsWith('./')) text = text.slice(2)
  text = withoutTrailingSlashes(text)
  if (workspaceRoot) {
    const root = withoutTrailingSlashes(workspaceRoot)
    if (text.startsWith(`${root}/`) && text.length > root.length + 1) text = text.slice(root.length + 1)
  }
  return text
}
