import { stripTrailing } from './clean-text.ts'
import type { ArtifactSink, IdentifierValue } from './masked-line.ts'
import { eachMatch, MaskedLine } from './masked-line.ts'
import { shapedLinePaths } from './shaped-line-paths.ts'
import { tokenPaths } from './token-paths.ts'

const URL = /\b[a-zA-Z][a-zA-Z0-9+.-]{1,15}:\/\/[^\s<>"'`]+/g
/** The target of an HTTP request line (`GET /static/app.js HTTP/1.1`): a route, never a path. */
const HTTP_TARGET = /\b(?:GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS) \/\S*/g
/** pnpm writes the workspace root as `<ROOT>`: `<ROOT>/packages/api/package.json` is `packages/api/package.json`. */
const PNPM_ROOT = /<ROOT>\/([^\s'"`]+)/g

const UUID = /\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b/g
const ADVISORY = /\b(?:CVE-\d{4}-\d{4,7}|GHSA(?:-[0-9a-z]{4}){3})\b/g
/** npm package specs with a version: `react@18.2.0`, `@testing-library/react@16`. */
const PACKAGE_SPEC = /(?<![\w@/.-])(?:@[a-z0-9][\w.-]*\/)?[a-z0-9][\w.-]*@\d[\w.+-]*/g
/** `#123`, `owner/repo#123` (names of at most 100 characters, as GitHub's, so no start reads further). */
const ISSUE_REFERENCE = /(?<![\w&#/])(?:[\w.-]{1,100}\/[\w.-]{1,100})?#[1-9]\d{0,6}\b/g
/** `GH-1198`, `PROJ-123`; see {@link NOT_TICKETS}. */
const TICKET = /\b[A-Z][A-Z0-9]{1,9}-\d{1,7}\b/g
/** Standards, algorithms and models that look like tickets. */
const NOT_TICKETS: ReadonlySet<string> = new Set(
  'UTF SHA ISO ECMA ES IPV TLS SSL HTTP AES RSA MD CP GMT UTC GPT COVID IEC IEEE ANSI WCAG'.split(' '),
)
/** `PORT=3000`, `--max-old-space-size=4096`: a key of at most 100 characters (so no start reads further). */
const KEY_VALUE = /(?<![\w-])((?:--?)?[A-Za-z_][\w.-]{0,99})=([^\s,;'"`()[\]{}<>=][^\s,;'"`()[\]{}<>]*)/g
const GIT_OBJECT_ID = /\b[0-9a-f]{7,64}\b/g
const VERSION = new RegExp(
  String.raw`(?<![\w.])v?\d+\.\d+\.\d+(?:-(?:alpha|beta|rc|next|canary|dev|pre|preview|` +
    String.raw`nightly)(?:[.-]?\d+(?:[.-]\d+)*)?)?(?:\+[0-9A-Za-z]+(?:\.[0-9A-Za-z]+)*)?(?![\w]|\.\d)`,
  'g',
)
/** Durations and measures start with a digit. */
const HAS_DIGIT = /\d/
/** `1h30m0s`, `45s`, `412ms`, `0.00s`: numbers glued to a time unit, one or several. */
const DURATION = /(?<![\w.])(?:\d+(?:\.\d+)?(?:ms|h|m|s))+(?![\w%])/g
/**
 * A number, an optional space, a unit of time, size, share or tokens, and an optional rate. Not
 * from the middle of a list of numbers (`1,2,3`): from there each start read the rest of the list again.
 */
const MEASURE = new RegExp(
  String.raw`(?<![\w.]|\d,)\d+(?:[.,]\d+)*\s?(?:ns|µs|μs|us|ms|sec|secs|seconds?|min|mins|minutes?|hrs?|` +
    String.raw`hours?|s|m|h|bytes|B|kB|KB|KiB|MB|MiB|GB|GiB|TB|TiB|%|tokens?|tok)(?:\/s(?:ec)?)?(?![\w])`,
  'g',
)

/** Trailing punctuation no URL ends with, and a closing bracket the URL did not open (counted once, not at each). */
export function trimUrl(url: string): string {
  let text = stripTrailing(url, '.,;:!?')
  for (const [open, close] of ['()', '[]', '{}']) {
    let unopened = 0
    for (let index = 0; index < text.length; index++)
      if (text[index] === close) unopened++
      else if (text[index] === open) unopened--
    while (text.endsWith(close!) && unopened-- > 0) text = stripTrailing(text.slice(0, -1), '.,;:!?')
  }
  return text.endsWith('/') && !text.endsWith('://') ? text.slice(0, -1) : text
}

const PACKAGE_SPEC_VALUE: IdentifierValue = (match) => stripTrailing(match[0], '.+-')
const TICKET_VALUE: IdentifierValue = (match) =>
  NOT_TICKETS.has(match[0].slice(0, match[0].indexOf('-'))) ? undefined : match[0]
const KEY_VALUE_VALUE: IdentifierValue = (match) => {
  const key = match[1]!.replace(/^-+/, '')
  const value = stripTrailing(match[2]!, '.')
  return key.length >= 2 && /\d/.test(value) ? `${match[1]}=${value}` : undefined
}
// A hex run between dashes is part of a generated name (`api-7d9f8c6b5d-2xkqp`, a Kubernetes pod), not an object id.
const GIT_OBJECT_ID_VALUE: IdentifierValue = (match, text) => {
  const inName = text[match.index - 1] === '-' && text[match.index + match[0].length] === '-'
  return !inName && /\d/.test(match[0]) && /[a-f]/.test(match[0]) ? match[0] : undefined
}

/**
 * Finds the token-like artifacts of one line: URLs, paths, identifiers and numbers with units,
 * in that order of precedence (what one class takes, the next ones do not see again).
 */
export function scanLine(line: string, sink: ArtifactSink, workspaceRoot: string | undefined): void {
  const scan = new MaskedLine(line, sink, workspaceRoot)

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
  shapedLinePaths(scan)
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
