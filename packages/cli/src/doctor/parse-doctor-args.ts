import type { CommandFlags } from '../shared/command-flags.ts'
import { formatUsage, parseFlags } from '../shared/command-flags.ts'
import { UsageError } from '../shared/usage-error.ts'

/** The parsed `warmfold doctor` command line. */
export interface DoctorArgs {
  /** The request log (JSONL). */
  readonly file: string
  /** Print the JSON document instead of the terminal report. */
  readonly json: boolean
  /** Also write the HTML page here. */
  readonly html?: string
  readonly help: boolean
}

/** What `warmfold doctor`'s flags set. */
type DoctorFlags = { html: string | undefined } & Omit<DoctorArgs, 'file' | 'html'>

/** `warmfold doctor`'s flags: the table that parses them and prints `--help`. */
export const DOCTOR_FLAGS: CommandFlags<DoctorFlags> = {
  command: 'doctor',
  synopsis: `Usage: warmfold doctor REQUESTS.jsonl [--json] [--html FILE]

Finds every prefix-cache break in an agent's raw request log. Each line is one request body
(OpenAI Chat Completions, OpenAI Responses, Anthropic Messages or Gemini generateContent) or
{ "body": …, "url"?: …, "t"?: ms, "headers"?: … }. For each request: the canonical prompt size,
what it shares with earlier requests of its cache family, the earlier request it matches best,
where it first diverges and which parts changed; then the breaks, most uncached first.`,
  footer: `A line that holds no readable request is reported with its number, never skipped silently.
Exit codes: 0 ok, 1 no readable request (or reading or writing failed midway), 2 bad flags, a
missing log or an --html file that cannot be written.`,
  column: 15,
  positionals: true,
  flags: {
    json: { default: false, help: ['print one JSON document on stdout instead of the report'] },
    html: {
      value: 'FILE',
      needs: 'a file name',
      help: ['also write the report as a self-contained HTML page (its folder must exist)'],
    },
    help: { short: 'h', default: false, help: ['show this help'] },
  },
}

/** `warmfold doctor --help`, printed from the flag table. */
export const DOCTOR_USAGE = formatUsage(DOCTOR_FLAGS)

/**
 * Parses `warmfold doctor` arguments.
 * @throws UsageError naming the bad flag or the missing log.
 */
export function parseDoctorArgs(argv: readonly string[]): DoctorArgs {
  const { values, positionals } = parseFlags(DOCTOR_FLAGS, argv)
  const [file, second] = positionals
  const { json, html, help } = values
  const args = { json, ...(html === undefined ? {} : { html }), help }
  if (second !== undefined)
    throw new UsageError(
      `warmfold doctor reads one request log, got ${JSON.stringify(file)} and ${JSON.stringify(second)}`,
    )
  if (help) return { file: file ?? '', ...args }
  if (file === undefined)
    throw new UsageError('warmfold doctor needs the request log: warmfold doctor REQUESTS.jsonl [--json] [--html FILE]')
  return { file, ...args }
}
