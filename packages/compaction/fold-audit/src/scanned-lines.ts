import { isSpaceCode } from './clean-text.ts'

/** The most characters a scan reads as one line: a longer line is read as several pieces. */
export const MAX_LINE_CHARS = 2000

/** The most characters a scan reads of one message (its texts, tool results and tool-call arguments together). */
export const MAX_MESSAGE_CHARS = 65_536

/** What is left to read of one message: each line read takes its characters and its line break. */
export interface ScanBudget {
  chars: number
}

/** A full budget, for one message. */
export const scanBudget = (): ScanBudget => ({ chars: MAX_MESSAGE_CHARS })

/** Where a piece of an over-long line may end: after white space or a JSON or CSV separator. */
const isSeparator = (code: number): boolean => code === 44 || code === 34 || code === 39 || isSpaceCode(code)

/**
 * The lines of `text` (`\n`, `\r\n` and `\r` end one) as the scan reads them, while `budget`
 * lasts: a line longer than {@link MAX_LINE_CHARS} (or than what is left of the budget) is read as
 * pieces of at most that many characters, each ending after the last white space, `,`, `"` or `'`
 * it holds (at the limit when it holds none), so no search of the scan reads more than
 * {@link MAX_LINE_CHARS} characters and the scan of one message reads at most its budget.
 */
export function scannedLines(text: string, budget: ScanBudget): string[] {
  const lines: string[] = []
  for (let start = 0; budget.chars > 0;) {
    const limit = start + Math.min(MAX_LINE_CHARS, budget.chars)
    let end = start
    while (end < text.length && end < limit && text.charCodeAt(end) !== 10 && text.charCodeAt(end) !== 13) end++
    const code = text.charCodeAt(end)
    let next = end + (code === 13 && text.charCodeAt(end + 1) === 10 ? 2 : 1)
    if (end < text.length && code !== 10 && code !== 13) {
      // A piece of a longer line (`end` is the limit): the rest is read as the next line.
      let cut = end
      while (cut > start && !isSeparator(text.charCodeAt(cut - 1))) cut--
      const last = text.charCodeAt(end - 1)
      end = cut > start ? cut : last >= 0xd800 && last <= 0xdbff && end - start > 1 ? end - 1 : end
      next = end
    }
    lines.push(text.slice(start, end))
    budget.chars -= next - start
    if (next > text.length) break
    start = next
  }
  return lines
}
