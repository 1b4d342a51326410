import { wordSet } from './word-set.ts'

/**
 * What a tool call does to the world, as the after-fold measures need it:
 * - `read`: looks something up and changes nothing (read a file, list, search, fetch);
 *   repeating one the fold removed is re-work;
 * - `write`: changes something or runs something (edit, create, delete, run a shell command,
 *   run the tests); repeating one is usually progress;
 * - `other`: neither (ask the user, think, plan).
 */
export type ToolKind = 'read' | 'write' | 'other'

/**
 * A host's declaration of its tools' kinds: by tool name, or a function of the name and the raw
 * arguments (to tell `cat` from `rm` inside one shell tool, say). A tool it does not declare
 * (missing from the record, or the function returns `undefined`) gets {@link defaultToolKind}.
 */
export type ToolKinds =
  | Readonly<Record<string, ToolKind>>
  | ((name: string, argumentsText: string) => ToolKind | undefined)

/** Words of a shell tool's name: its bare string arguments, or its `script` or `input`, are a shell command. */
const SHELL_WORDS = 'exec execute bash shell sh zsh powershell terminal command cmd'

/** Words of a shell or run tool's name: a writer (below), and a runner rather than a file changer. */
const RUNNER_BASE_WORDS = `run ${SHELL_WORDS}`

/**
 * Words that make a tool a writer. Shell and run tools are writers on purpose: a shell call can
 * edit, install or run anything, and running the tests again after an edit is progress, not
 * re-work (the same choice as aimee's rounds-to-resume, which leaves `bash`, `edit` and `test`
 * out of its re-read signatures). A host whose shell tool mostly reads declares it with
 * {@link ToolKinds}.
 */
const WRITE_WORDS: ReadonlySet<string> = wordSet(`
  write edit create delete remove rm apply patch replace insert update move rename mkdir save put post
  commit push merge install deploy ${RUNNER_BASE_WORDS}
`)

/** Words that make a tool a reader (when no write word is in its name). */
const READ_WORDS: ReadonlySet<string> = wordSet(`
  read get list search grep find cat view ls glob fetch show open look lookup inspect status diff log
  head tail stat query describe browse tree download load
`)

/** Words of a tool name that runs commands rather than changing files it names. */
const RUNNER_WORDS: ReadonlySet<string> = wordSet(`${RUNNER_BASE_WORDS} test tests`)

/**
 * The lower-case words of a tool name: `readFile`, `read_file`, `read-file` and `fs.read.file` all
 * give `read`, `file`.
 */
export function toolNameWords(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word !== '')
}

const SHELL_TOOL_WORDS: ReadonlySet<string> = wordSet(`${SHELL_WORDS} console`)

/** Whether tool `name` is a shell tool (see `readToolCallArguments`). */
export function isShellTool(name: string): boolean {
  return toolNameWords(name).some((word) => SHELL_TOOL_WORDS.has(word))
}

/**
 * The kind of a tool nobody declared, from the words of its name: a write word (write, edit,
 * create, delete, apply, patch, run, exec, bash, shell, terminal, …) makes it `write`, else a read
 * word (read, get, list, search, grep, find, cat, view, ls, glob, fetch, …) makes it `read`, else
 * `other`. Write words win, so `read_and_update` is a writer: counting a writer's repeat as
 * re-work would be the worse mistake.
 */
export function defaultToolKind(name: string): ToolKind {
  const words = toolNameWords(name)
  if (words.some((word) => WRITE_WORDS.has(word))) return 'write'
  if (words.some((word) => READ_WORDS.has(word))) return 'read'
  return 'other'
}

/** The kind of tool `name` called with `argumentsText`: the host's declaration, else {@link defaultToolKind}. */
export function resolveToolKind(toolKinds: ToolKinds | undefined, name: string, argumentsText: string): ToolKind {
  const declared = typeof toolKinds === 'function' ? toolKinds(name, argumentsText) : toolKinds?.[name]
  if (declared === undefined) return defaultToolKind(name)
  if (declared !== 'read' && declared !== 'write' && declared !== 'other') {
    throw new TypeError(
      `toolKinds: the kind of tool ${JSON.stringify(name)} must be 'read', 'write' or 'other', ` +
        `got ${JSON.stringify(declared)}`,
    )
  }
  return declared
}

/**
 * Whether a `write` tool changes the files its arguments name (`edit_file`, `apply_patch`,
 * `write_file`) rather than running something (`bash`, `run_tests`), whose path arguments are
 * files it reads.
 */
export function changesNamedFiles(name: string, kind: ToolKind): boolean {
  return kind === 'write' && !toolNameWords(name).some((word) => RUNNER_WORDS.has(word))
}
