import { capLength, collapseWhitespace, stripTrailingPunctuation } from './clean-text.ts'

/** The longest error text kept (UTF-16 code units): a headline, not the whole log line of a minified bundle. */
export const MAX_ERROR_LENGTH = 200

/** A line rule: its match's first group is the headline, the whole match when the pattern has no group. */
export interface HeadlineRule {
  readonly pattern: RegExp
}

/**
 * The headline rules, first match wins (`test/corpus/LABELLING.md`
 * says what counts as a headline). Every pattern is anchored and has no nested repetition, so a line is matched in
 * time linear in its length.
 */
export const HEADLINE_RULES: readonly HeadlineRule[] = [
  // Compilers with coded errors: TypeScript (`src/a.ts(3,1): error TS2322: …`, `src/a.ts:3:1 - error TS2322: …`,
  // `error TS5083: …`), C# and MSBuild (`Foo.cs(41,29): error CS0103: …`), F# (`FS0039`).
  { pattern: /(?:^|[\s)])error ([A-Z]{1,4}\d{3,5}: .+)$/ },
  // pnpm: ` ERR_PNPM_OUTDATED_LOCKFILE  Cannot install …`.
  { pattern: /^\s*(ERR_PNPM_[A-Z_]+\s+.+)$/ },
  // Rust and other compilers: `error[E0308]: …`, `error: …`, also after a location (`a.c:4:2: error: …`).
  { pattern: /^\s*(?:\S+:\d+(?::\d+)?: )?((?:fatal )?error(?:\[E\d{4}\])?: .+)$/ },
  // ESLint rows: `  14:7  error  'x' is defined but never used  rule-name`.
  { pattern: /^\s*\d+:\d+\s+(error\s+.+)$/ },
  // Go: `./main.go:10:2: undefined: foo`, and `t.Errorf` lines (`duration_test.go:27: …`).
  { pattern: /^\s*\S+\.go:\d+(?::\d+)?: (.+)$/ },
  // Linters that print a rule code after the location: ruff and flake8 (`a.py:3:8: F401 …`), pylint
  // (`C0114`), stylelint.
  { pattern: /^\s*\S+:\d+:\d+: ([A-Z]{1,4}\d{2,5}\b.*)$/ },
  // RSpec: `Failure/Error: expect(order.total).to eq(112.5)`.
  { pattern: /^\s*(Failure\/Error: .+)$/ },
  // Bundlers (webpack, Next.js, Vite): `Module not found: Error: Can't resolve './x' in '/app/src'`.
  { pattern: /^Module not found: .+$/ },
  // Failed tests: vitest and jest `FAIL <file> …`, go `--- FAIL: TestX (0.00s)` and `FAIL <package> 0.01s`.
  { pattern: /^\s*(?:--- )?(FAIL:?\s+\S.*)$/ },
  // pytest: `FAILED tests/x.py::test_y - …`.
  { pattern: /^(FAILED \S.*)$/ },
  // jest: `  ● Cart › applies a discount`.
  { pattern: /^\s*● (.+)$/ },
  // Panics: Go `panic: …`, Rust `thread 'main' panicked at src/main.rs:4:5:`.
  { pattern: /^panic: .+$/ },
  { pattern: /^\s*(thread '[^']*' panicked at .+?):?$/ },
  // Exceptions: `TypeError: …`, `Error [ERR_X]: …`, `requests.exceptions.ConnectionError: …`,
  // `ImportError while importing …`, after `Uncaught `, `Caused by: ` or `Exception in thread "x" `.
  {
    pattern: new RegExp(
      String.raw`^\s*(?:Uncaught |Caused by: |` +
        String.raw`Exception in thread "[^"]*" )?((?:[A-Za-z_$][\w$]*\.)*(?:[A-Z][\w$]*)?(?:Error|` +
        String.raw`Exception)(?: \[[\w:-]+\])?(?::| while ).*)$`,
    ),
  },
  // Tool errors.
  { pattern: /^fatal: .+$/ },
  { pattern: /^CONFLICT \(.+$/ },
  { pattern: /^\S+: (?:line \d+: )?\S+: command not found$/ },
  {
    pattern: /^\S+: .+: (?:No such file or directory|Permission denied|Is a directory|Not a directory)$/,
  },
  { pattern: /^make(?:\[\d+\])?: \*\*\* .+$/ },
  { pattern: /^FAILURE: .+$/ },
  { pattern: /^##\[error\](.+)$/ },
  // Log lines at level ERROR, FATAL or CRITICAL, also after a `[timestamp]` or an ISO timestamp.
  // The timestamp may carry a zone and be followed by a process id (PostgreSQL:
  // `2025-06-05 08:15:03.902 UTC [64] FATAL:  …`).
  {
    pattern: new RegExp(
      String.raw`^\s*(?:\[[^\]]{1,40}\]\s*|\d{4}-\d{2}-\d{2}[T ][\d:.,]+(?:Z|\s?[A-Z]{2,5}|` +
        String.raw`\s?[+-]\d{2}:?\d{2})?\s+(?:\[\d+\]\s+)?)?((?:\[(?:ERROR|FATAL|CRITICAL)\]|(?:ERROR|FATAL|` +
        String.raw`CRITICAL)\b)(?::|\s).*)$`,
    ),
  },
  // A sentence reporting a failure: `Automatic merge failed; …`, `Execution failed for task …`.
  { pattern: /^[A-Z][A-Za-z-]*(?: [A-Za-z-]+){0,2} failed\b.*$/ },
]

/**
 * Text every line a rule of {@link HEADLINE_RULES} matches holds (a word of the rule, or the shape of a
 * linter's `path:line:col: CODE`): most lines of a tool's output (a file read, a listing) hold
 * none of it, and one search for all of them is much cheaper than trying two dozen rules. The
 * fold audit's tests check, on every line of the labelled corpus and on random lines, that no
 * rule matches a line this misses.
 */
export const MAY_HOLD_HEADLINE = new RegExp(
  String.raw`error|ERR_PNPM_|\.go:\d|:\d+:\d+: [A-Z]|FAIL|●|panic|Error|Exception|Module not found|fatal|` +
    String.raw`CONFLICT|command not found|No such file or directory|Permission denied|Is a directory|` +
    String.raw`Not a directory|\*\*\*|ERROR|FATAL|CRITICAL|failed`,
)

/**
 * pytest marks the lines of an error with `E` and at least two spaces; the first line of a run of
 * them is the headline.
 */
const PYTEST_ERROR_LINE = /^E {2,}(\S.*)$/
/** npm 6–9 (`npm ERR!`) and npm 10 (`npm error`), also behind a build tool's timer (`21.52 npm ERR! …`). */
const NPM_ERROR_LINE = /^\s*(?:\d+(?:\.\d+)?\s+)?npm (?:ERR!|error)(?: (.*))?$/
/** The npm lines before the headline: the error code and where it happened. */
const NPM_PREAMBLE = /^(?:code|errno|syscall|path|dest|signal|command|cwd|A complete log)\b/
const TRACEBACK_START = /^Traceback \(most recent call last\):/

/** The headline text an error line normalizes to: white space collapsed, trailing punctuation stripped, capped. */
export function normalizeErrorText(text: string): string {
  return capLength(stripTrailingPunctuation(collapseWhitespace(text)), MAX_ERROR_LENGTH)
}

/**
 * Finds error headlines line by line in one text (one tool result, one code block). It keeps
 * the state some formats need across lines: a Python traceback's last line, the first line of
 * a pytest `E` run, npm's one headline per run.
 */
export class ErrorHeadlines {
  private inTraceback = false
  private previousWasPytestError = false
  private npmHeadlineSeen = false
  /** How many headlines this text produced so far. */
  found = 0

  /** The headline `line` holds, normalized, or `undefined`. */
  line(line: string): string | undefined {
    const headline = this.match(line)
    if (headline === undefined) return undefined
    const text = normalizeErrorText(headline)
    if (text === '') return undefined
    this.found++
    return text
  }

  private match(line: string): string | undefined {
    const pytest = PYTEST_ERROR_LINE.exec(line)
    const startsPytestRun = pytest !== null && !this.previousWasPytestError
    this.previousWasPytestError = pytest !== null
    if (pytest) return startsPytestRun ? pytest[1] : undefined

    const npm = NPM_ERROR_LINE.exec(line)
    if (npm) {
      const content = (npm[1] ?? '').trim()
      if (this.npmHeadlineSeen || content === '' || NPM_PREAMBLE.test(content)) return undefined
      this.npmHeadlineSeen = true
      return content
    }

    if (TRACEBACK_START.test(line)) {
      this.inTraceback = true
      return undefined
    }
    if (MAY_HOLD_HEADLINE.test(line)) {
      for (const rule of HEADLINE_RULES) {
        const match = rule.pattern.exec(line)
        if (match) {
          if (this.inTraceback && !/^\s/.test(line)) this.inTraceback = false
          return match[1] ?? match[0]
        }
      }
    }
    // The last line of a Python traceback is its exception, also one that names no Error
    // (`KeyboardInterrupt`, `StopIteration: x`): the first unindented line after the frames.
    if (this.inTraceback && line.trim() !== '' && !/^\s/.test(line)) {
      this.inTraceback = false
      if (/^During handling|^The above exception/.test(line)) return undefined
      return line
    }
    return undefined
  }
}
