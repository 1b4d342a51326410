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

export const DOCTOR_USAGE = `Usage: warmfold doctor REQUESTS.jsonl [--json] [--html FILE]

Finds every prefix-cache break in an agent's raw request log. Each line is one request body
(OpenAI Chat Completions, OpenAI Responses, Anthropic Messages or Gemini generateContent) or
{ "body": …, "url"?: …, "t"?: ms, "headers"?: … }. For each request: the canonical prompt size,
what it shares with earlier requests of its cache family, the earlier request it matches best,
where it first diverges and which parts changed; then the breaks, most uncached first.

Options:
  --json         print one JSON document on stdout instead of the report
  --html FILE    also write the report as a self-contained HTML page (its folder must exist)
  -h, --help     show this help

A line that holds no readable request is reported with its number, never skipped silently.
Exit codes: 0 ok, 1 no readable request (or reading or writing failed midway), 2 bad flags, a
missing log or an --html file that cannot be written.`

/**
 * Parses `warmfold doctor` arguments.
 * @throws UsageError naming the bad flag or the missing log.
 */
export function parseDoctorArgs(argv: readonly string[]): DoctorArgs {
  let file: string | undefined
  let json = false
  let html: string | undefined
  let help = false
  for (let index = 0; index < argv.length; index++) {
    const raw = argv[index] as string
    const [flag, inline] =
      raw.startsWith('--') && raw.includes('=')
        ? [raw.slice(0, raw.indexOf('=')), raw.slice(raw.indexOf('=') + 1)]
        : [raw, undefined]
    switch (flag) {
      case '-h':
      case '--help':
        help = true
        break
      case '--json':
        if (inline !== undefined) throw new UsageError(`--json takes no value, got ${JSON.stringify(raw)}`)
        json = true
        break
      case '--html': {
        const value = inline ?? argv[++index]
        if (value === undefined) throw new UsageError('--html needs a file name')
        html = value
        break
      }
      default:
        if (raw.startsWith('-') && raw !== '-')
          throw new UsageError(`unknown flag ${JSON.stringify(raw)}; run warmfold doctor --help for the flags`)
        if (file !== undefined)
          throw new UsageError(
            `warmfold doctor reads one request log, got ${JSON.stringify(file)} and ${JSON.stringify(raw)}`,
          )
        file = raw
    }
  }
  if (help) return { file: file ?? '', json, ...(html === undefined ? {} : { html }), help }
  if (file === undefined)
    throw new UsageError('warmfold doctor needs the request log: warmfold doctor REQUESTS.jsonl [--json] [--html FILE]')
  return { file, json, ...(html === undefined ? {} : { html }), help }
}
