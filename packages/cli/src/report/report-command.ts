import { join } from 'node:path'
import type { CommandIo } from '../shared/command-io.ts'
import type { OutputFile } from '../shared/output-file.ts'
import { withOutputFile, writeDocument } from '../shared/output-file.ts'
import { buildSessionReport } from './build-session-report.ts'
import { formatReportText } from './format-report-text.ts'
import { integer, sourceText } from './report-format.ts'
import type { SessionReport } from './report-model.ts'
import type { ReportArgs } from './parse-report-args.ts'
import type { SessionLog } from './read-session-log.ts'
import { readSessionLog } from './read-session-log.ts'
import { readStoreSession } from './read-store-session.ts'
import { buildProxyReport, buildProxyStoreReport, isProxyLog, isProxyStoreSession } from './read-proxy-log.ts'
import { renderReportHtml } from './render-report-html.ts'

/** The log `args` name: a JSONL file, `DIR/<id>.jsonl` of `--store file:DIR`, or a session read from an SQL store. */
function readLog(args: ReportArgs): Promise<SessionLog> {
  if (!args.store) return readSessionLog(args.session)
  if (args.store.kind === 'file') return readSessionLog(join(args.store.directory, `${args.session}.jsonl`))
  return readStoreSession(args.store, args.session)
}

/** The report of a session log; a `warmfold proxy --store` session is read as the proxy's log. */
function reportOfLog(log: SessionLog, args: ReportArgs): Promise<SessionReport> | SessionReport {
  return isProxyStoreSession(log.events) ? buildProxyStoreReport(log, args.price) : buildSessionReport(log, args.price)
}

/**
 * The file the report reads (the JSONL log, or the SQLite database), which `--out` must not be; none for PostgreSQL.
 */
function logFile(args: ReportArgs): { path: string; what: string } | undefined {
  if (!args.store) return { path: args.session, what: 'the session log the report reads' }
  if (args.store.kind === 'file')
    return { path: join(args.store.directory, `${args.session}.jsonl`), what: 'the session log the report reads' }
  if (args.store.kind === 'sqlite') return { path: args.store.path, what: 'the SQLite database the report reads' }
  return undefined
}

/**
 * Runs `warmfold report`: checks `--out` first, reads and checks the whole log, then prints the
 * terminal summary on stdout or, with `--out`, writes the HTML page and prints one line saying so.
 * @throws UsageError when `--out` cannot be written or the log does not exist; RunError when the
 *   log has a corrupt or torn line (naming file and line) or `--out` cannot be written after all.
 */
export async function runReport(args: ReportArgs, io: CommandIo): Promise<SessionReport> {
  const input = logFile(args)
  const writer = { command: 'warmfold report', document: 'the HTML page', inputs: input ? [input] : [] }
  return withOutputFile(args.out, writer, (output) => reportTo(args, io, output))
}

/** Reads the log, then prints the summary or writes the page to `output`. */
async function reportTo(args: ReportArgs, io: CommandIo, output: OutputFile | undefined): Promise<SessionReport> {
  const report =
    !args.store && (await isProxyLog(args.session).catch(() => false))
      ? await buildProxyReport(args.session, args.price)
      : await reportOfLog(await readLog(args), args)
  if (!output) {
    io.stdout(args.json ? `${JSON.stringify(report, null, 2)}\n` : `${formatReportText(report)}\n`)
    return report
  }
  await writeDocument(output, '--out', renderReportHtml(report))
  io.stdout(
    `warmfold report: wrote ${args.out}: ${integer(report.totals.requests)} requests, ` +
      `${integer(report.totals.folds)} fold(s), ${integer(report.totals.breaks)} break(s), numbers from ` +
      `${sourceText(report.source)}\n`,
  )
  return report
}
