import type { ArtifactClass } from './artifact.ts'
import { isWordCode } from './occurs-as-word.ts'
import { KNOWN_FILE_NAME_LENGTHS, normalizePath, pathFromToken } from './path-rules.ts'

/** Receives every artifact a scan finds, in order of appearance. */
export type ArtifactSink = (artifactClass: ArtifactClass, text: string) => void

/** A half-open span `[start, end)` of a line that later passes must not read again. */
type Span = readonly [number, number]

/** `line` with every span replaced by spaces of the same length, so positions stay put. */
function masked(line: string, spans: readonly Span[]): string {
  if (spans.length === 0) return line
  let result = ''
  let cursor = 0
  for (const [start, end] of spans.toSorted((a, b) => a[0] - b[0])) {
    if (start < cursor) continue
    result += line.slice(cursor, start) + ' '.repeat(end - start)
    cursor = end
  }
  return result + line.slice(cursor)
}

const URL = /\b[a-zA-Z][a-zA-Z0-9+.-]{1,15}:\/\/[^\s<>"'`]+/g
/** The target of an HTTP request line (`GET /static/app.js HTTP/1.1`): a route, never a path. */
const HTTP_TARGET = /\b(?:GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS) \/\S*/g
/** pnpm writes the workspace root as `<ROOT>`: `<ROOT>/packages/api/package.json` is `packages/api/package.json`. */
const PNPM_ROOT = /<ROOT>\/([^\s'"`]+)/g
/** Whether code unit `code` is one of a path token's characters, `[\w.~@+\-/:]`. */
function isTokenCode(code: number): boolean {
  return isWordCode(code) || code === 46 || code === 45 || code === 47 || code === 58 || code === 126 || code === 64 || code === 43
}

/** Whether code unit `code` is `.`, `/`, `:` or `~`, one of which every path but a well-known file name holds. */
function isPathSignCode(code: number): boolean {
  return code === 46 || code === 47 || code === 58 || code === 126
}

/** `ls -l` rows: permissions, links, owner, group, size, date, then the name (`a -> b` for a symbolic link). */
const LS_LONG = /^[-dlcbps][rwxsStT-]{9}[@+.]?\s+\d+\s+\S+\s+\S+\s+[\d.,]+[KMGTkB]?\s+(?:[A-Z][a-z]{2}\s+\d{1,2}\s+(?:\d{1,2}:\d{2}|\d{4})|\d{4}-\d{2}-\d{2}(?:\s+\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?(?:\s+[+-]\d{4})?)\s+(.+)$/d
/** `git status` entries: `\tmodified:   src/a.ts`, `\trenamed:    a -> b`. */
const GIT_STATUS_LONG = /^\s+(?:modified|new file|deleted|renamed|copied|typechange|both modified|both added|both deleted|added by us|added by them|deleted by us|deleted by them):\s+(\S.*)$/d
/** `git status --short` entries: two status letters, a space, the path (`R  a -> b`). */
const GIT_STATUS_SHORT = /^(?![ ]{2})[ MADRCUT?!]{2} (\S+(?: -> \S+)?)$/d
/** `tree` and similar listings: `├── name`, `└─ name/` (one word: `└── zod 3.22.4` is a dependency tree, read as text). */
const TREE_ENTRY = /^[\s│├└─|`]*[├└]─+\s+(\S+)$/d
/** `du -h` rows: a size with its unit, a tab, the path (`412M<TAB>node_modules`); a bare number before a tab is `cat -n`'s line number. */
const DU_ROW = /^\s*[\d.,]+[KMGTP]i?B?\t(\S.*)$/d
/** Coverage tables: the first cell of a row whose other cells are numbers (`  app.ts  |  92.85 |  83.33 |`). */
const COVERAGE_ROW = /^\s*([\w.@/-]+)\s*\|(?:\s*[\d.]+\s*\|){2,}/d
/** Diff headers: `diff --git a/x b/y`, `--- a/x`, `+++ b/x`, `rename from x`; apply_patch headers `*** Update File: x`. */
const DIFF_GIT = /^diff --git a\/(\S+) b\/(\S+)$/d
const DIFF_FILE = /^(?:---|\+\+\+) ([ab]\/\S+)/d
const DIFF_RENAME = /^(?:rename|copy) (?:from|to) (\S.*)$/d
const PATCH_FILE = /^\*\*\* (?:Add|Update|Delete) File: (\S.*)$|^\*\*\* Move to: (\S.*)$/d

const UUID = /\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b/g
const ADVISORY = /\b(?:CVE-\d{4}-\d{4,7}|GHSA(?:-[0-9a-z]{4}){3})\b/g
/** npm package specs with a version: `react@18.2.0`, `@testing-library/react@16`. */
const PACKAGE_SPEC = /(?<![\w@/.-])(?:@[a-z0-9][\w.-]*\/)?[a-z0-9][\w.-]*@\d[\w.+-]*/g
const ISSUE_REFERENCE = /(?<![\w&#/])(?:[\w.-]+\/[\w.-]+)?#[1-9]\d{0,6}\b/g
/** `GH-1198`, `PROJ-123`; see {@link NOT_TICKETS}. */
const TICKET = /\b[A-Z][A-Z0-9]{1,9}-\d{1,7}\b/g
/** Standards, algorithms and models that look like tickets. */
const NOT_TICKETS: ReadonlySet<string> = new Set(['UTF', 'SHA', 'ISO', 'ECMA', 'ES', 'IPV', 'TLS', 'SSL', 'HTTP', 'AES', 'RSA', 'MD', 'CP', 'GMT', 'UTC', 'GPT', 'COVID', 'IEC', 'IEEE', 'ANSI', 'WCAG'])
const KEY_VALUE = /(?<![\w-])((?:--?)?[A-Za-z_][\w.-]*)=([^\s,;'"`()[\]{}<>=][^\s,;'"`()[\]{}<>]*)/g
const GIT_OBJECT_ID = /\b[0-9a-f]{7,64}\b/g
const VERSION = /(?<![\w.])v?\d+\.\d+\.\d+(?:-(?:alpha|beta|rc|next|canary|dev|pre|preview|nightly)(?:[.-]?\d+)*)?(?:\+[0-9A-Za-z]+(?:\.[0-9A-Za-z]+)*)?(?![\w]|\.\d)/g
/** Durations and measures start with a digit. */
const HAS_DIGIT = /\d/
/** `1h30m0s`, `45s`, `412ms`, `0.00s`: numbers glued to a time unit, one or several. */
const DURATION = /(?<![\w.])(?:\d+(?:\.\d+)?(?:ms|h|m|s))+(?![\w%])/g
/** A number, an optional space, a unit of time, size, share or tokens, and an optional rate. */
const MEASURE = /(?<![\w.])\d+(?:[.,]\d+)*\s?(?:ns|µs|μs|us|ms|sec|secs|seconds?|min|mins|minutes?|hrs?|hours?|s|m|h|bytes|B|kB|KB|KiB|MB|MiB|GB|GiB|TB|TiB|%|tokens?|tok)(?:\/s(?:ec)?)?(?![\w])/g

/** Trailing punctuation no URL ends with, and a closing bracket the URL did not open. */
function trimUrl(url: string): string {
  let text = url.replace(/[.,;:!?]+$/, '')
  for (const [open, close] of [['(', ')'], ['[', ']'], ['{', '}']] as const) {
    while (text.endsWith(close) && text.split(open).length < text.split(close).length) text = text.slice(0, -1).replace(/[.,;:!?]+$/, '')
  }
  return text.endsWith('/') && !text.endsWith('://') ? text.slice(0, -1) : text
}

/** What a path scan needs to know besides the line. */
export interface LineTokenOptions {
  readonly workspaceRoot?: string
  /** Lines scanned before with the same `workspaceRoot`, replayed instead of scanned again. */
  readonly lineCache?: LineCache
}

/** What a scan of one line found, in order; the scan is pure, so a line seen again replays it. */
type LineArtifacts = readonly (readonly [ArtifactClass, string])[]

/** How many scanned lines a {@link LineCache} keeps for replay before it starts over. */
export const LINE_CACHE_LIMIT = 50_000

/**
 * Lines already scanned under one workspace root (an `ArtifactExtractor` holds one). Agents
 * re-read the same files and re-run the same commands, so a session repeats many of its lines
 * (the audit bench's coding session: about half of its characters). Bounded: it is cleared once
 * it holds {@link LINE_CACHE_LIMIT} lines.
 */
export class LineCache {
  private readonly lines = new Map<string, LineArtifacts>()

  get(line: string): LineArtifacts | undefined {
    return this.lines.get(line)
  }

  set(line: string, found: LineArtifacts): void {
    if (this.lines.size >= LINE_CACHE_LIMIT) this.lines.clear()
    this.lines.set(line, found)
  }

  /** Forgets every line (a line may keep the whole text it was split from alive). */
  clear(): void {
    this.lines.clear()
  }
}

/**
 * Finds the token-like artifacts of one line: URLs, paths, identifiers and numbers with units,
 * in that order of precedence (what one class takes, the next ones do not see again). With
 * `options.lineCache`, a line scanned before is replayed from it.
 */
export function scanLineTokens(line: string, sink: ArtifactSink, options: LineTokenOptions = {}): void {
  const cache = options.lineCache
  const known = cache?.get(line)
  if (known) {
    for (const [artifactClass, text] of known) sink(artifactClass, text)
    return
  }
  if (cache === undefined) return scanLine(line, sink, options)
  const found: (readonly [ArtifactClass, string])[] = []
  scanLine(line, (artifactClass, text) => void found.push([artifactClass, text]), options)
  cache.set(line, found)
  for (const [artifactClass, text] of found) sink(artifactClass, text)
}

function scanLine(line: string, sink: ArtifactSink, options: LineTokenOptions): void {
  let text = line
  const spans: Span[] = []
  const take = (start: number, end: number): void => {
    spans.push([start, end])
  }
  const flush = (): void => {
    text = masked(text, spans)
    spans.length = 0
  }
  const path = (raw: string): void => {
    const normalized = normalizePath(raw, options.workspaceRoot)
    if (normalized !== '' && normalized !== '.' && normalized !== '..') sink('path', normalized)
  }

  // Each pattern below is tried only on a line holding a character or text every match of it
  // holds (a URL its `://`): most lines hold few of them, and a search for one is cheaper than
  // a regular expression's pass.
  if (text.includes('://')) {
    for (const match of text.matchAll(URL)) {
      const url = trimUrl(match[0])
      if (url.indexOf('://') + 3 < url.length) sink('url', url)
      take(match.index, match.index + match[0].length)
    }
  }
  if (text.includes(' /')) for (const match of text.matchAll(HTTP_TARGET)) take(match.index, match.index + match[0].length)
  flush()

  // Lines whose shape says where the paths are: listings and diff headers.
  if (text.includes('<ROOT>/')) {
    for (const match of text.matchAll(PNPM_ROOT)) {
      path(match[1]!)
      take(match.index, match.index + match[0].length)
    }
  }
  flush()
  const shaped = LS_LONG.exec(text) ?? GIT_STATUS_LONG.exec(text) ?? GIT_STATUS_SHORT.exec(text) ?? TREE_ENTRY.exec(text) ?? COVERAGE_ROW.exec(text) ?? DU_ROW.exec(text)
  if (shaped?.indices?.[1]) {
    const entry = shaped[1]!.trim()
    for (const name of entry.split(' -> ')) {
      const cleaned = name.trim().replace(/^["']|["']$/g, '')
      if (/[A-Za-z0-9]/.test(cleaned) && cleaned !== '.' && cleaned !== '..') path(cleaned)
    }
    take(shaped.indices[1][0], shaped.indices[1][1])
  }
  const fileHeader = DIFF_FILE.exec(text)
  if (fileHeader?.indices?.[1]) {
    path(fileHeader[1]!.slice(2))
    take(fileHeader.indices[1][0], fileHeader.indices[1][1])
  }
  const header = DIFF_GIT.exec(text) ?? DIFF_RENAME.exec(text) ?? PATCH_FILE.exec(text)
  if (header?.indices) {
    for (let group = 1; group < header.length; group++) {
      const value = header[group]
      if (value === undefined) continue
      path(value.trim())
      take(header.indices[group]![0], header.indices[group]![1])
    }
  }
  flush()

  // Each maximal run of token characters, found without a regular expression: most runs are
  // words, and a word is a path only as a well-known file name (`Makefile`, also with trailing
  // dashes), so a word of another length is passed over without making its string.
  for (let position = 0; position < text.length; ) {
    if (!isTokenCode(text.charCodeAt(position))) {
      position++
      continue
    }
    const start = position
    let sign = false
    for (; position < text.length; position++) {
      const code = text.charCodeAt(position)
      if (!isTokenCode(code)) break
      if (isPathSignCode(code)) sign = true
    }
    const end = position
    if (!sign) {
      let wordEnd = end
      while (wordEnd > start && text.charCodeAt(wordEnd - 1) === 45) wordEnd--
      if (wordEnd - start < KNOWN_FILE_NAME_LENGTHS.shortest || wordEnd - start > KNOWN_FILE_NAME_LENGTHS.longest) continue
    }
    const found = pathFromToken(text.slice(start, end), text[start - 1] ?? '', text[end] ?? '')
    if (found !== undefined) {
      path(found)
      take(start, end)
    }
  }
  flush()

  const identifiers = (needs: string | undefined, pattern: RegExp, accept: (match: RegExpExecArray) => string | undefined = (match) => match[0]): void => {
    if (needs !== undefined && !text.includes(needs)) return
    for (const match of text.matchAll(pattern)) {
      const value = accept(match)
      if (value === undefined) continue
      sink('identifier', value)
      take(match.index, match.index + match[0].length)
    }
    flush()
  }
  identifiers('-', UUID)
  if (text.includes('CVE-') || text.includes('GHSA')) identifiers(undefined, ADVISORY)
  identifiers('@', PACKAGE_SPEC, (match) => match[0].replace(/[.+-]+$/, ''))
  identifiers('#', ISSUE_REFERENCE)
  identifiers('-', TICKET, (match) => (NOT_TICKETS.has(match[0].slice(0, match[0].indexOf('-'))) ? undefined : match[0]))
  identifiers('=', KEY_VALUE, (match) => {
    const key = match[1]!.replace(/^-+/, '')
    const value = match[2]!.replace(/\.+$/, '')
    return key.length >= 2 && /\d/.test(value) ? `${match[1]}=${value}` : undefined
  })
  // A hex run between dashes is part of a generated name (`api-7d9f8c6b5d-2xkqp`, a Kubernetes pod), not an object id.
  identifiers(undefined, GIT_OBJECT_ID, (match) => {
    const inName = text[match.index - 1] === '-' && text[match.index + match[0].length] === '-'
    return !inName && /\d/.test(match[0]) && /[a-f]/.test(match[0]) ? match[0] : undefined
  })
  identifiers('.', VERSION)

  if (!HAS_DIGIT.test(text)) return
  for (const match of text.matchAll(DURATION)) {
    sink('number', match[0])
    take(match.index, match.index + match[0].length)
  }
  flush()
  for (const match of text.matchAll(MEASURE)) sink('number', match[0].replace(/\s+/g, ' '))
}
