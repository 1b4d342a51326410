import { capLength, collapseWhitespace } from './clean-text.ts'
import { wordSet } from './word-set.ts'

/** The longest command text kept (UTF-16 code units). */
export const MAX_COMMAND_LENGTH = 300

/**
 * Programs whose name opens a command: a code span the user or the assistant wrote that starts
 * with one of them (`node dist/server.js`) is a command, any other code span is not.
 */
const PROGRAMS: ReadonlySet<string> = wordSet(`
  npm npx pnpm yarn bun bunx node deno tsc tsx vitest jest eslint prettier oxlint git gh cargo rustc
  rustup go python python3 pip pip3 pytest poetry uv make cmake docker docker-compose kubectl helm
  terraform curl wget ls cat grep rg find sed awk cd mkdir rm cp mv chmod touch export ssh scp psql
  mysql redis-cli brew apt apt-get sudo bash sh zsh java javac mvn gradle ./gradlew dotnet ruby bundle
  rails rake php composer swift xcodebuild lsof kill pkill ps tail head wc sort diff patch tar unzip
  jq env source tree du df
`)

/** Code block languages whose lines are commands. */
const SHELL_LANGUAGES: ReadonlySet<string> = wordSet('sh bash shell zsh fish console shell-session powershell ps1 cmd')

/**
 * A command as the audit compares it: its first line, white space collapsed, at most {@link
 * MAX_COMMAND_LENGTH} code units.
 */
export function normalizeCommand(command: string): string {
  const firstLine = command.trim().split('\n', 1)[0] ?? ''
  return capLength(collapseWhitespace(firstLine), MAX_COMMAND_LENGTH)
}

/**
 * Programs that are a whole command on their own (`ls`); any other program needs an argument (`the
 * \`node\` binary` names a program, runs nothing).
 */
const STANDALONE_PROGRAMS: ReadonlySet<string> = new Set(['ls', 'make', 'pytest', 'tree', 'tsc', 'vitest', 'jest'])

/**
 * Whether a code span's text is a command: its first word is a known program, with an argument
 * unless the program runs alone.
 */
export function looksLikeCommand(text: string): boolean {
  const words = text.trim().split(/\s+/)
  const program = words[0] ?? ''
  return PROGRAMS.has(program) && (words.length > 1 || STANDALONE_PROGRAMS.has(program))
}

/** Whether a fenced code block in language `language` holds shell commands. */
export function isShellLanguage(language: string): boolean {
  return SHELL_LANGUAGES.has(language.toLowerCase())
}

/**
 * The command of a shell tool's `command` argument when it is an argument vector: the script of
 * `["bash", "-lc", "go test ./..."]`, otherwise the words joined with spaces.
 */
export function commandFromVector(words: readonly string[]): string {
  const [program, flag, script] = words
  if (
    words.length === 3 &&
    program !== undefined &&
    /(?:^|\/)(?:ba|z|da|k)?sh$|(?:^|\/)pwsh$|(?:^|\/)powershell$/.test(program) &&
    flag !== undefined &&
    /^-\w*c\w*$|^-Command$/i.test(flag)
  ) {
    return script ?? ''
  }
  return words.join(' ')
}
