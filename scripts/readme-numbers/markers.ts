/**
 * The two marks `pnpm readme-numbers` looks for in a README (both HTML comments, so GitHub shows
 * nothing of them):
 *
 * - a block, on lines of its own, whose content is a command's output or a generated table:
 *
 *       <!-- generated: warmfold bench --price anthropic-5m | table -->
 *       ```text
 *       …
 *       ```
 *       <!-- /generated -->
 *
 *   A fenced content keeps its fence lines (only what is between them is generated);
 * - a figure, inline in a sentence or a table cell: `<!-- figure: name -->13.1 %<!-- /figure -->`.
 */

/** A mark found in a README. */
export interface Mark {
  readonly kind: 'block' | 'figure'
  /** What follows `generated:` or `figure:`: a command line (`warmfold …`) or a name. */
  readonly spec: string
  /** The 1-based line of the opening comment, for messages. */
  readonly line: number
  /** The generated part, as the README has it now. */
  readonly content: string
  /** Offsets of `content` in the README's text. */
  readonly start: number
  readonly end: number
}

const BLOCK = /^<!-- generated: (.+?) -->\n([\s\S]*?)^<!-- \/generated -->$/gm
const FIGURE = /<!-- figure: (.+?) -->([\s\S]*?)<!-- \/figure -->/g
const FENCE = /^(```[^\n]*\n)([\s\S]*?\n?)(```)\n$/

/**
 * Every mark of `text`, in order.
 * @throws Error naming the line of a mark that is opened and never closed, or nested in another.
 */
export function findMarks(text: string, file: string): Mark[] {
  const lineOf = (offset: number) => text.slice(0, offset).split('\n').length
  // Marks quoted in code (a README that explains them) are not marks: matched on a copy with code blanked out.
  const scanned = withoutCode(text)
  const marks: Mark[] = []
  for (const match of scanned.matchAll(BLOCK)) {
    const start = match.index + match[0].indexOf('\n') + 1
    const content = text.slice(start, start + match[2]!.length)
    if (match[2]!.includes('<!-- generated:'))
      throw new Error(`${file}:${lineOf(match.index)}: a generated block opens inside another one`)
    marks.push({
      kind: 'block',
      spec: match[1]!.trim(),
      line: lineOf(match.index),
      content,
      start,
      end: start + content.length,
    })
  }
  for (const match of scanned.matchAll(FIGURE)) {
    const start = match.index + match[0].indexOf('-->') + 3
    const content = text.slice(start, start + match[2]!.length)
    if (match[2]!.includes('<!--'))
      throw new Error(`${file}:${lineOf(match.index)}: a figure holds a comment: it is not closed before the next mark`)
    marks.push({
      kind: 'figure',
      spec: match[1]!.trim(),
      line: lineOf(match.index),
      content,
      start,
      end: start + content.length,
    })
  }
  const opened = (scanned.match(/<!-- generated: /g) ?? []).length
  const figures = (scanned.match(/<!-- figure: /g) ?? []).length
  if (opened !== marks.filter((mark) => mark.kind === 'block').length || figures !== marks.length - opened) {
    const unclosed = [...scanned.matchAll(/<!-- (generated|figure): /g)].find(
      (match) => !marks.some((mark) => lineOf(match.index) === mark.line && mark.start > match.index),
    )
    throw new Error(
      `${file}:${unclosed ? lineOf(unclosed.index) : '?'}: a mark is not closed: a block ends with a line ` +
        '<!-- /generated -->, a figure with <!-- /figure -->',
    )
  }
  return marks.toSorted((a, b) => a.start - b.start)
}

/** `part` as spaces, its newlines kept. */
const blank = (part: string) => part.replace(/[^\n]/g, ' ')

/** `text` with fenced code blocks and inline code spans blanked out (same length, newlines kept). */
function withoutCode(text: string): string {
  return text.replace(/^```[^\n]*\n[\s\S]*?^```$/gm, blank).replace(/`[^`\n]+`/g, blank)
}

/**
 * What a block's content becomes with `generated` inside: a fenced content keeps its fence lines,
 * anything else is replaced whole. Ends with a newline.
 */
export function blockContent(current: string, generated: string): string {
  const body = generated.endsWith('\n') ? generated : `${generated}\n`
  const fence = FENCE.exec(current)
  return fence ? `${fence[1]}${body}${fence[3]}\n` : body
}

/** `text` with each mark's content replaced by `next(mark)` (marks as {@link findMarks} returned them). */
export function replaceMarks(text: string, marks: readonly Mark[], next: (mark: Mark) => string): string {
  let out = ''
  let at = 0
  for (const mark of marks) {
    out += text.slice(at, mark.start) + next(mark)
    at = mark.end
  }
  return out + text.slice(at)
}
