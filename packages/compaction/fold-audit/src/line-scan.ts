import type { ArtifactClass } from './artifact.ts'
import { isWordCode } from './occurs-as-word.ts'
import { KNOWN_FILE_NAME_LENGTHS, normalizePath, pathFromToken } from './path-rules.ts'

/** Receives every artifact a scan finds, in order of appearance. */
export type ArtifactSink = (artifactClass: ArtifactClass, text: string) => void

const URL = /\b[a-zA-Z][a-zA-Z0-9+.-]{1,15}:\/\/[^\s<>"'`]+/g
/** The target of an HTTP request line (`GET /static/app.js HTTP/1.1`): a route, never a path. */
const HTTP_TARGET = /\b(?:GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS) \/\S*/g
/** pnpm writes the workspace root as `<ROOT>`: `<ROOT>/packages/api/package.json` is `packages/api/package.json`. */
const PNPM_ROOT = /<ROOT>\/([^\s'"`]+)/g
/** `ls -l` rows: permissions, links, owner, group, size, date, then the name (`a -> b` for a symbolic link). */
const LS_LONG =
  /^[-dlcbps][rwxsStT-]{9}[@+.]?\s+\d+\s+\S+\s+\S+\s+[\d.,]+[KMGTkB]?\s+(?:[A-Z][a-z]{2}\s+\d{1,2}\s+(?:\d{1,2}:\d{2}|\d{4})|\d{4}-\d{2}-\d{2}(?:\s+\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?(?:\s+[+-]\d{4})?)\s+(.+)$/d
/** `git status` entries: `\tmodified:   src/a.ts`, `\trenamed:    a -> b`. */
const GIT_STATUS_LONG =
  /^\s+(?:modified|new file|deleted|renamed|copied|typechange|both modified|both added|both deleted|added by us|added by them|deleted by us|deleted by them):\s+(\S.*)$/d
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
const NOT_TICKETS: ReadonlySet<string> = new Set([
  'UTF',
  'SHA',
  'ISO',
  'ECMA',
  'ES',
  'IPV',
  'TLS',
  'SSL',
  'HTTP',
  'AES',
  'RSA',
  'MD',
  'CP',
  'GMT',
  'UTC',
  'GPT',
  'COVID',
  'IEC',
  'IEEE',
  'ANSI',
  'WCAG',
])
const KEY_VALUE = /(?<![\w-])((?:--?)?[A-Za-z_][\w.-]*)=([^\s,;'"`()[\]{}<>=][^\s,;'"`()[\]{}<>]*)/g
const GIT_OBJECT_ID = /\b[0-9a-f]{7,64}\b/g
const VERSION =
  /(?<![\w.])v?\d+\.\d+\.\d+(?:-(?:alpha|beta|rc|next|canary|dev|pre|preview|nightly)(?:[.-]?\d+)*)?(?:\+[0-9A-Za-z]+(?:\.[0-9A-Za-z]+)*)?(?![\w]|\.\d)/g
/** Durations and measures start with a digit. */
const HAS_DIGIT = /\d/
/** `1h30m0s`, `45s`, `412ms`, `0.00s`: numbers glued to a time unit, one or several. */
const DURATION = /(?<![\w.])(?:\d+(?:\.\d+)?(?:ms|h|m|s))+(?![\w%])/g
/** A number, an optional space, a unit of time, size, share or tokens, and an optional rate. */
const MEASURE =
  /(?<![\w.])\d+(?:[.,]\d+)*\s?(?:ns|µs|μs|us|ms|sec|secs|seconds?|min|mins|minutes?|hrs?|hours?|s|m|h|bytes|B|kB|KB|KiB|MB|MiB|GB|GiB|TB|TiB|%|tokens?|tok)(?:\/s(?:ec)?)?(?![\w])/g

/** Trailing punctuation no URL ends with, and a closing bracket the URL did not open. */
function trimUrl(url: string): string {
  let text = url.replace(/[.,;:!?]+$/, '')
  for (const [open, close] of [
    ['(', ')'],
    ['[', ']'],
    ['{', '}'],
  ] as const) {
    while (text.endsWith(close) && text.split(open).length < text.split(close).length)
      text = text.slice(0, -1).replace(/[.,;:!?]+$/, '')
  }
  return text.endsWith('/') && !text.endsWith('://') ? text.slice(0, -1) : text
}

/** Per ASCII code unit: 1 for a path token's characters `[\w.~@+\-/:]`, 3 for those of them every path but a well-known file name holds (`.`, `/`, `:`, `~`). */
const TOKEN_CODES = (() => {
  const codes = new Uint8Array(128)
  for (let code = 0; code < 128; code++)
    if (isWordCode(code) || '-@+'.includes(String.fromCharCode(code))) codes[code] = 1
  for (const sign of './:~') codes[sign.charCodeAt(0)] = 3
  return codes
})()

/** `pattern`'s matches in `text`, each passed to `visit` (a `g` pattern's own loop: `matchAll` copies the pattern at every call). */
function eachMatch(pattern: RegExp, text: string, visit: (match: RegExpExecArray) => void): void {
  pattern.lastIndex = 0
  for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) visit(match)
  pattern.lastIndex = 0
}

/** What an identifier pattern's match stands for (`undefined`: nothing), given the masked line it was found in. */
type IdentifierValue = (match: RegExpExecArray, text: string) => string | undefined
const WHOLE_MATCH: IdentifierValue = (match) => match[0]
const PACKAGE_SPEC_VALUE: IdentifierValue = (match) => match[0].replace(/[.+-]+$/, '')
const TICKET_VALUE: IdentifierValue = (match) =>
  NOT_TICKETS.has(match[0].slice(0, match[0].indexOf('-'))) ? undefined : match[0]
const KEY_VALUE_VALUE: IdentifierValue = (match) => {
  const key = match[1]!.replace(/^-+/, '')
  const value = match[2]!.replace(/\.+$/, '')
  return key.length >= 2 && /\d/.test(value) ? `${match[1]}=${value}` : undefined
}
// A hex run between dashes is part of a generated name (`api-7d9f8c6b5d-2xkqp`, a Kubernetes pod), not an object id.
const GIT_OBJECT_ID_VALUE: IdentifierValue = (match, text) => {
  const inName = text[match.index - 1] === '-' && text[match.index + match[0].length] === '-'
  return !inName && /\d/.test(match[0]) && /[a-f]/.test(match[0]) ? match[0] : undefined
}

/**
 * One line being read: what a pass takes (a half-open span `[start, end)`) later passes must
 * not read again, so each pass reads {@link text} with the spans taken before it blanked out.
 */
class LineScan {
  /** The line, with every span taken by an earlier pass replaced by spaces of the same length (positions stay put). */
  text: string
  /** Spans taken since the last {@link flush}, as start, end, start, end… */
  private readonly spans: number[] = []

  constructor(
    line: string,
    readonly sink: ArtifactSink,
    private readonly workspaceRoot: string | undefined,
  ) {
    this.text = line
  }

  take(start: number, end: number): void {
    this.spans.push(start, end)
  }

  /** Blanks the spans taken since the last flush out of {@link text}. */
  flush(): void {
    const spans = this.spans
    if (spans.length === 0) return
    const order: number[] = []
    for (let index = 0; index < spans.length; index += 2) order.push(index)
    if (order.length > 1) order.sort((a, b) => spans[a]! - spans[b]!)
    let result = ''
    let cursor = 0
    for (const index of order) {
      const start = spans[index]!
      const end = spans[index + 1]!
      if (start < cursor) continue
      result += this.text.slice(cursor, start) + ' '.repeat(end - start)
      cursor = end
    }
    this.text = result + this.text.slice(cursor)
    spans.length = 0
  }

  path(raw: string): void {
    const normalized = normalizePath(raw, this.workspaceRoot)
    if (normalized !== '' && normalized !== '.' && normalized !== '..') this.sink('path', normalized)
  }

  /** Every match of `pattern` an `identifier` (what `value` makes of it), its span taken; skipped when the line lacks `needs`. */
  identifiers(needs: string | undefined, pattern: RegExp, value: IdentifierValue = WHOLE_MATCH): void {
    const text = this.text
    if (needs !== undefined && !text.includes(needs)) return
    pattern.lastIndex = 0
    for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
      const found = value(match, text)
      if (found === undefined) continue
      this.sink('identifier', found)
      this.take(match.index, match.index + match[0].length)
    }
    pattern.lastIndex = 0
    this.flush()
  }
}

/**
 * Finds the token-like artifacts of one line: URLs, paths, identifiers and numbers with units,
 * in that order of precedence (what one class takes, the next ones do not see again).
 */
export function scanLine(line: string, sink: ArtifactSink, workspaceRoot: string | undefined): void {
  const scan = new LineScan(line, sink, workspaceRoot)

  // Each pattern below is tried only on a line holding a character or text every match of it
  // holds (a URL its `://`): most lines hold few of them, and a search for one is cheaper than
  // a regular expression's pass.
  if (line.includes('://')) {
    eachMatch(URL, line, (match) => {
      const url = trimUrl(match[0])
      if (url.indexOf('://') + 3 < url.length) sink('url', url)
      scan.take(match.index, match.index + match[0].length)
    })
  }
  if (line.includes(' /'))
    eachMatch(HTTP_TARGET, line, (match) => scan.take(match.index, match.index + match[0].length))
  scan.flush()

  // Lines whose shape says where the paths are: listings and diff headers.
  if (scan.text.includes('<ROOT>/')) {
    eachMatch(PNPM_ROOT, scan.text, (match) => {
      scan.path(match[1]!)
      scan.take(match.index, match.index + match[0].length)
    })
    scan.flush()
  }
  shapedLine(scan)
  tokenPaths(scan)
  scan.identifiers('-', UUID)
  if (scan.text.includes('CVE-') || scan.text.includes('GHSA')) scan.identifiers(undefined, ADVISORY)
  scan.identifiers('@', PACKAGE_SPEC, PACKAGE_SPEC_VALUE)
  scan.identifiers('#', ISSUE_REFERENCE)
  scan.identifiers('-', TICKET, TICKET_VALUE)
  scan.identifiers('=', KEY_VALUE, KEY_VALUE_VALUE)
  scan.identifiers(undefined, GIT_OBJECT_ID, GIT_OBJECT_ID_VALUE)
  scan.identifiers('.', VERSION)

  if (!HAS_DIGIT.test(scan.text)) return
  eachMatch(DURATION, scan.text, (match) => {
    sink('number', match[0])
    scan.take(match.index, match.index + match[0].length)
  })
  scan.flush()
  eachMatch(MEASURE, scan.text, (match) => sink('number', match[0].replace(/\s+/g, ' ')))
}

/** The paths of a line whose shape says where they are: a listing's entry, a diff or patch header. */
function shapedLine(scan: LineScan): void {
  const text = scan.text
  const shaped =
    LS_LONG.exec(text) ??
    GIT_STATUS_LONG.exec(text) ??
    GIT_STATUS_SHORT.exec(text) ??
    TREE_ENTRY.exec(text) ??
    COVERAGE_ROW.exec(text) ??
    DU_ROW.exec(text)
  if (shaped?.indices?.[1]) {
    const entry = shaped[1]!.trim()
    for (const name of entry.split(' -> ')) {
      const cleaned = name.trim().replace(/^["']|["']$/g, '')
      if (/[A-Za-z0-9]/.test(cleaned) && cleaned !== '.' && cleaned !== '..') scan.path(cleaned)
    }
    scan.take(shaped.indices[1][0], shaped.indices[1][1])
  }
  const fileHeader = DIFF_FILE.exec(text)
  if (fileHeader?.indices?.[1]) {
    scan.path(fileHeader[1]!.slice(2))
    scan.take(fileHeader.indices[1][0], fileHeader.indices[1][1])
  }
  const header = DIFF_GIT.exec(text) ?? DIFF_RENAME.exec(text) ?? PATCH_FILE.exec(text)
  if (header?.indices) {
    for (let group = 1; group < header.length; group++) {
      const value = header[group]
      if (value === undefined) continue
      scan.path(value.trim())
      scan.take(header.indices[group]![0], header.indices[group]![1])
    }
  }
  scan.flush()
}

/**
 * The paths among a line's maximal runs of token characters, found without a regular
 * expression: most runs are words, and a word is a path only as a well-known file name
 * (`Makefile`, also with trailing dashes), so a word of another length is passed over without
 * making its string.
 */
function tokenPaths(scan: LineScan): void {
  const text = scan.text
  const length = text.length
  for (let position = 0; position < length;) {
    const first = text.charCodeAt(position)
    if (first >= 128 || TOKEN_CODES[first] === 0) {
      position++
      continue
    }
    const start = position
    let signs = 0
    for (; position < length; position++) {
      const code = text.charCodeAt(position)
      const kind = code < 128 ? TOKEN_CODES[code]! : 0
      if (kind === 0) break
      signs |= kind
    }
    const end = position
    if (signs !== 3) {
      let wordEnd = end
      while (wordEnd > start && text.charCodeAt(wordEnd - 1) === 45) wordEnd--
      if (wordEnd - start < KNOWN_FILE_NAME_LENGTHS.shortest || wordEnd - start > KNOWN_FILE_NAME_LENGTHS.longest)
        continue
    }
    const found = pathFromToken(text.slice(start, end), text[start - 1] ?? '', text[end] ?? '')
    if (found !== undefined) {
      scan.path(found)
      scan.take(start, end)
    }
  }
  scan.flush()
}
