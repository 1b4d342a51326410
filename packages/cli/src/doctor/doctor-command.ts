import { stat } from 'node:fs/promises'
import type { CommandIo } from '../shared/command-io.ts'
import { RunError } from '../shared/run-error.ts'
import { printable, printableJson } from '../shared/printable-text.ts'
import { UsageError } from '../shared/usage-error.ts'
import type { OutputFile } from '../shared/output-file.ts'
import { withOutputFile, writeDocument } from '../shared/output-file.ts'
import type { DoctorReport } from './doctor-report.ts'
import { formatDoctorReport } from './format-doctor-report.ts'
import type { DoctorArgs } from './parse-doctor-args.ts'
import { readRequestLog } from './read-request-log.ts'
import { renderDoctorHtml } from './render-doctor-html.ts'
import { RequestDoctor } from './request-doctor.ts'

/**
 * Reads the log, prints the terminal report (or the JSON document with `--json`) on stdout and
 * writes `--html`. Returns exit code 0 and the report.
 * @throws UsageError when the log is not a readable file or `--html` cannot be written, before
 *   anything is read; RunError when reading fails midway, no line holds a readable request (the
 *   unreadable lines are printed on stderr), or `--html` cannot be written after the report was
 *   printed.
 */
export async function runDoctor(args: DoctorArgs, io: CommandIo): Promise<{ code: number; report: DoctorReport }> {
  const info = await stat(args.file).catch((error: NodeJS.ErrnoException) => {
    const why = error.code === 'ENOENT' ? 'no such file' : (error.code ?? error.message)
    throw new UsageError(`cannot read the request log ${JSON.stringify(args.file)}: ${why}`)
  })
  if (!info.isFile()) throw new UsageError(`the request log ${JSON.stringify(args.file)} is not a file`)
  const writer = {
    flag: '--html',
    command: 'warmfold doctor',
    document: 'the HTML page',
    inputs: [{ path: args.file, what: 'the request log doctor reads' }],
  }
  return withOutputFile(args.html, writer, (html) => diagnose(args, io, html))
}

/** Reads and diagnoses the log, prints the report and writes the page to `html`. */
async function diagnose(
  args: DoctorArgs,
  io: CommandIo,
  html: OutputFile | undefined,
): Promise<{ code: number; report: DoctorReport }> {
  const doctor = new RequestDoctor()
  try {
    for await (const line of readRequestLog(args.file)) doctor.add(line)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === undefined) throw error
    throw new RunError(`reading ${JSON.stringify(args.file)} failed: ${code}`, { cause: error })
  }
  const report = doctor.report()
  const unreadable = `${report.unreadable.length} unreadable line${report.unreadable.length === 1 ? '' : 's'}`
  if (report.totals.requests === 0) {
    for (const line of report.unreadable) io.stderr(printable(`${args.file}:${line.index}: ${line.reason}`))
    const why = report.unreadable.length ? ` (${unreadable}, listed above)` : ' (it is empty)'
    throw new RunError(`${JSON.stringify(args.file)} holds no readable request${why}`)
  }
  if (args.json) {
    io.stdout(`${printableJson(JSON.stringify(report, null, 2))}\n`)
    if (report.unreadable.length)
      io.stderr(
        printable(
          `warmfold doctor: ${unreadable} in ${args.file}: ` +
            `${report.unreadable.map((line) => line.index).join(', ')} (see "unreadable")`,
        ),
      )
  } else io.stdout(formatDoctorReport(report, args.file))
  if (html) await writeDocument(html, '--html', renderDoctorHtml(report, args.file), ' (the report is on stdout)')
  return { code: 0, report }
}
