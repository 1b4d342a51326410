import type { ArtifactClass } from './artifact.ts'
import { normalizePath } from './path-rules.ts'

/** Receives every artifact a scan finds, in order of appearance. */
export type ArtifactSink = (artifactClass: ArtifactClass, text: string) => void

/** What an identifier pattern's match stands for (`undefined`: nothing), given the masked line it was found in. */
export type IdentifierValue = (match: RegExpExecArray, text: string) => string | undefined
/** The match itself. */
const WHOLE_MATCH: IdentifierValue = (match) => match[0]

/**
 * One line being read: what a pass takes (a half-open span `[start, end)`) later passes must
 * not read again, so each pass reads {@link text} with the spans taken before it blanked out.
 */
export class MaskedLine {
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

  /**
   * Every match of `pattern` an `identifier` (what `value` makes of it), its span taken; skipped
   * when the line lacks `needs`.
   */
  identifiers(needs: string | undefined, pattern: RegExp, value: IdentifierValue = WHOLE_MATCH): void {
    const text = this.text
    if (needs !== undefined && !text.includes(needs)) return
    eachMatch(pattern, text, (match) => {
      const found = value(match, text)
      if (found === undefined) return
      this.sink('identifier', found)
      this.take(match.index, match.index + match[0].length)
    })
    this.flush()
  }
}

/**
 * `pattern`'s matches in `text`, each passed to `visit` (a `g` pattern's own loop: `matchAll`
 * copies the pattern at every call).
 */
export function eachMatch(pattern: RegExp, text: string, visit: (match: RegExpExecArray) => void): void {
  pattern.lastIndex = 0
  for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) visit(match)
  pattern.lastIndex = 0
}
