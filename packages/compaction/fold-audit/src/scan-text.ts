import { cleanText, collapseWhitespace, stripTrailingPunctuation } from './clean-text.ts'
import { isShellLanguage, looksLikeCommand, normalizeCommand } from './command-text.ts'
import { ErrorHeadlines } from './error-headlines.ts'
import { exitCodeOf } from './exit-status.ts'
import type { ArtifactSink, LineTokenOptions } from './line-tokens.ts'
import { scanLineTokens } from './line-tokens.ts'
import { isArgumentFolder } from './path-rules.ts'
import { scanBudget, scannedLines } from './scanned-lines.ts'

/**
 * Who wrote a text, which decides what is read in it:
 * - `tool`: a tool's result: every line is read for error headlines;
 * - `user`: the user's own text: sentences become `user-message` artifacts; lines and code are
 *   read for errors (users paste logs, fenced or not);
 * - `assistant`: the assistant's text (or a checkpoint): errors and commands only inside code
 *   spans and code blocks, since its prose paraphrases what the tools said.
 */
export type TextSource = 'tool' | 'user' | 'assistant'

/**
 * Prefixes a log viewer puts before each line of the program's output, removed before a line
 * is read: GitHub Actions (`job<TAB>step<TAB>2025-06-04T07:12:51.6630112Z `), docker compose
 * (`db-1  | `), and the frame Terraform and other tools draw around a message (`│ `).
 */
const LOG_PREFIX = new RegExp(
  String.raw`^(?:(?:[^\t\n]{0,200}\t){0,2}\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z ?|` +
    String.raw`[\w.-]{1,60}[-_]\d{1,3} +\| |[│┃╷╵] ?)`,
)
const FENCE = /^\s{0,3}(`{3,}|~{3,})\s*([\w+-]*)/
const PROMPT_LINE = /^\s*\$ (\S.*)$/
/** npm announces a script as `> name@version script`, then the command on the next `> ` line. */
const NPM_SCRIPT = /^> (?:@[\w.-]+\/)?[\w.-]+@\S+ \S+$/
const NPM_COMMAND = /^> (\S.*)$/
const CODE_SPAN = /`([^`\n]+)`/g
const LIST_MARKER = /^\s*(?:[-*+>]|\d+[.)])\s+/

/** What one scan found besides what it sent to the sink. */
export interface ScanSummary {
  /** The error headlines found, in order. */
  readonly errors: readonly string[]
  /** The exit code a tool's text reports (`exitCodeOf`, the last line that reports one wins). */
  readonly exitCode?: number
  /** The first line read that is not blank. */
  readonly firstLine?: string
}

/** Sends `command` and the source folders named as its bare arguments (`eslint src`). */
export function addCommand(command: string, sink: ArtifactSink): void {
  const normalized = normalizeCommand(command)
  if (normalized === '') return
  sink('command', normalized)
  for (const word of normalized.split(' ')) if (isArgumentFolder(word)) sink('path', word)
}

/**
 * The sentences of one line of the user's text: split after `.`, `!` or `?` followed by white
 * space; at least two words each.
 */
function sentences(line: string, sink: ArtifactSink): void {
  const body = line.replace(LIST_MARKER, '')
  for (const part of body.split(/(?<=[.!?])\s+/)) {
    const sentence = stripTrailingPunctuation(collapseWhitespace(part))
    if (sentence.split(' ').length >= 2 && sentence.length >= 4) sink('user-message', sentence)
  }
}

/**
 * Reads every artifact of one text (see {@link TextSource}) into `sink`, in order of appearance:
 * the lines `scannedLines` gives (pieces of at most `MAX_LINE_CHARS` characters, while
 * `options.budget`, else a budget of its own, lasts) one by one, each without its ANSI codes.
 */
export function scanText(
  text: string,
  source: TextSource,
  sink: ArtifactSink,
  options: LineTokenOptions = {},
): ScanSummary {
  const errors: string[] = []
  const error = (headline: string | undefined): boolean => {
    if (headline === undefined) return false
    errors.push(headline)
    sink('error', headline)
    return true
  }
  const headlines = new ErrorHeadlines()
  let fence: { readonly marker: string; readonly shell: boolean; readonly headlines: ErrorHeadlines } | undefined
  let npmScript = false
  let exitCode: number | undefined
  let firstLine: string | undefined

  for (const piece of scannedLines(text, options.budget ?? scanBudget())) {
    const rawLine = cleanText(piece)
    if (source === 'tool') exitCode = exitCodeOf(piece) ?? exitCode
    if (firstLine === undefined && rawLine.trim() !== '') firstLine = rawLine
    const line = rawLine.replace(LOG_PREFIX, '')
    const fenceMatch = source === 'tool' ? null : FENCE.exec(line)
    if (fenceMatch) {
      if (fence === undefined) {
        fence = { marker: fenceMatch[1]!, shell: isShellLanguage(fenceMatch[2] ?? ''), headlines: new ErrorHeadlines() }
        continue
      }
      if (fenceMatch[1]!.startsWith(fence.marker) && (fenceMatch[2] ?? '') === '') {
        fence = undefined
        continue
      }
    }
    if (fence) {
      // A code block: pasted output (read like a tool's) or a script (one command per line).
      error(fence.headlines.line(line))
      const prompt = PROMPT_LINE.exec(line)
      if (prompt) addCommand(prompt[1]!, sink)
      else if (fence.shell && line.trim() !== '' && !line.trim().startsWith('#')) addCommand(line, sink)
      scanLineTokens(line, sink, options)
      continue
    }

    let lineHadError = source !== 'assistant' && error(headlines.line(line))
    const prompt = PROMPT_LINE.exec(line)
    if (prompt) addCommand(prompt[1]!, sink)
    if (npmScript && !prompt) {
      const echoed = NPM_COMMAND.exec(line)
      if (echoed) addCommand(echoed[1]!, sink)
    }
    npmScript = NPM_SCRIPT.test(line)
    if (source !== 'tool') {
      for (const span of line.matchAll(CODE_SPAN)) {
        const code = span[1]!.trim()
        if (looksLikeCommand(code)) addCommand(code, sink)
        else if (!lineHadError) lineHadError = error(new ErrorHeadlines().line(code))
      }
      if (source === 'user') sentences(line, sink)
    }
    scanLineTokens(line, sink, options)
  }
  return { errors, ...(exitCode === undefined ? {} : { exitCode }), ...(firstLine === undefined ? {} : { firstLine }) }
}
