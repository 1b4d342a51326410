import { commandFromVector, normalizeCommand } from './command-text.ts'
import type { ArtifactSink, LineTokenOptions } from './line-tokens.ts'
import { scanLineTokens } from './line-tokens.ts'
import { normalizePath } from './path-rules.ts'
import { addCommand } from './scan-text.ts'
import { scanBudget, scannedLines } from './scanned-lines.ts'
import { isShellTool } from './tool-kind.ts'

/** What a tool call's arguments say, besides the artifacts sent to the sink. */
export interface ToolCallArguments {
  /** The shell command the call runs, normalized; `undefined` for a call that runs none. */
  readonly command?: string
  /** The paths its path-like arguments name, normalized, in order. */
  readonly paths: readonly string[]
}

/**
 * A key, lower-cased, without `_` and `-`: `file_path`, `filePath` and `file-path` are all `filepath`;
 * `''` for a key longer than any word below could be.
 */
function keyWord(key: string): string {
  return key.length > 100 ? '' : key.toLowerCase().replace(/[_-]/g, '')
}

/**
 * An argument key (see {@link keyWord}) whose value is a path: `path`, `file`, `dir` and the like,
 * or a key ending in one.
 */
const PATH_KEY = new RegExp(
  String.raw`^(?:path|paths|file|files|filename|filenames|dir|dirs|directory|directories|cwd|workdir|` +
    String.raw`workingdirectory|root|folder|folders)$|(?:path|paths|file|files|dir|directory|folder)$`,
)

function isCommandKey(word: string, shellTool: boolean): boolean {
  return (
    word === 'command' ||
    word === 'cmd' ||
    word === 'commandline' ||
    word === 'shellcommand' ||
    word === 'commands' ||
    (shellTool && (word === 'script' || word === 'input' || word === 'code'))
  )
}

const isPatchKey = (word: string): boolean =>
  word === 'patch' || word === 'input' || word === 'diff' || word === 'patchtext'
const isUrlKey = (word: string): boolean =>
  word === 'url' || word === 'uri' || word === 'href' || word === 'endpoint' || word === 'urls'

/** A path-like argument value: one line, not a glob, not empty. */
function pathValue(value: string): string | undefined {
  const text = value.trim()
  if (text === '' || text.length > 1024 || text.includes('\n') || /[*?[\]{}]/.test(text)) return undefined
  return text
}

/**
 * Reads a tool call's arguments, structured first: paths from path-like keys (`path`,
 * `file_path`, `files`, `cwd`, anything ending in `path`, `file` or `dir`), the command from
 * `command` / `cmd` (an argument vector too) or, for a shell tool, from `script` / `input` or a
 * bare string, the files of a patch (`*** Update File: x`, `+++ b/x`), URLs from `url`-like keys.
 * Other arguments (file contents, edit strings, search patterns) are not read: they are what
 * the call writes or looks for, not facts of the session.
 *
 * Arguments that are not JSON are read as a shell command for a shell tool and otherwise as text.
 */
export function readToolCallArguments(
  name: string,
  argumentsText: string,
  sink: ArtifactSink,
  options: LineTokenOptions = {},
): ToolCallArguments {
  const shellTool = isShellTool(name)
  const budget = options.budget ?? scanBudget()
  const lines = (text: string): string[] => scannedLines(text, budget)
  const paths: string[] = []
  let command: string | undefined
  const addPath = (value: string): void => {
    const path = normalizePath(value, options.workspaceRoot)
    if (path === '') return
    paths.push(path)
    sink('path', path)
  }
  const runCommand = (value: string): void => {
    const normalized = normalizeCommand(value)
    if (normalized === '') return
    command ??= normalized
    addCommand(value, sink)
    // The command names files and identifiers too (`cat src/a.ts`, `PORT=3000 node x`).
    for (const line of lines(value))
      scanLineTokens(line, (artifactClass, text) => artifactClass !== 'command' && sink(artifactClass, text), options)
  }

  let parsed: unknown
  try {
    parsed = JSON.parse(argumentsText)
  } catch {
    if (shellTool) runCommand(argumentsText)
    else for (const line of lines(argumentsText)) scanLineTokens(line, sink, options)
    return { ...(command === undefined ? {} : { command }), paths }
  }
  if (typeof parsed === 'string' && shellTool) runCommand(parsed)

  // Depth first, in document order, with a stack of its own: arguments may nest deeper than the call stack goes.
  const stack: [value: unknown, key: string][] = [[parsed, '']]
  for (let entry = stack.pop(); entry !== undefined; entry = stack.pop()) {
    const [value, key] = entry
    const word = keyWord(key)
    if (Array.isArray(value)) {
      if (isCommandKey(word, shellTool) && word !== 'commands' && value.every((item) => typeof item === 'string'))
        runCommand(commandFromVector(value as string[]))
      else for (let index = value.length - 1; index >= 0; index--) stack.push([value[index], key])
    } else if (value !== null && typeof value === 'object') {
      const children = Object.entries(value)
      for (let index = children.length - 1; index >= 0; index--) stack.push([children[index]![1], children[index]![0]])
    } else if (typeof value !== 'string') continue
    else if (isCommandKey(word, shellTool)) runCommand(value)
    else if (PATH_KEY.test(word)) {
      const path = pathValue(value)
      if (path !== undefined) addPath(path)
    } else if (isPatchKey(word)) {
      for (const line of lines(value)) {
        const header =
          /^\*\*\* (?:Add|Update|Delete) File: (\S.*)$|^\*\*\* Move to: (\S.*)$|^(?:---|\+\+\+) [ab]\/(\S+)/.exec(line)
        const file = header?.[1] ?? header?.[2] ?? header?.[3]
        if (file !== undefined) addPath(file.trim())
      }
    } else if (isUrlKey(word)) for (const line of lines(value)) scanLineTokens(line, sink, options)
  }
  return { ...(command === undefined ? {} : { command }), paths }
}
