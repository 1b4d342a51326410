import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { CommandIo } from '../bench-command.ts'
import { checkOutPath } from '../check-out-path.ts'
import { RunError } from '../run-error.ts'
import { buildSessionReport } from './build-session-report.ts'
import { formatReportText } from './format-report-text.ts'
import { integer } from './report-format.ts'
import type { SessionReport } from './report-model.ts'
import type { ReportArgs } from './parse-report-args.ts'
import type { SessionLog } from './read-session-log.ts'
import { readSessionLog } from './read-session-log.ts'
import { readStoreSession } from './read-store-session.ts'
import { renderReportHtml } from './render-report-html.ts'

/** The log `args` name: a JSONL file, `DIR/<id>.jsonl` of `--store file:DIR`, or a session read from an SQL store. */
function readLog(args: ReportArgs): Promise<SessionLog> {
  if (!args.store) return readSessionLog(args.session)
  if (args.store.kind === 'file') return readSessionLog(join(args.store.directory, `${args.session}.jsonl`))
  return readStoreSession(args.store, args.session)
}

/**
 * Runs `warmfold report`: checks `--out` first, reads and checks the whole log, then prints the
 * terminal summary on stdout or, with `--out`, writes the HTML page and prints one line saying so.
 * @throws UsageError when `--out` cannot be written or the log does not exist; RunError when the
 *   log has a corrupt or torn line (naming file and line) or `--out` cannot be written after all.
 */
export async function runReport(args: ReportArgs, io: CommandIo): Promise<SessionReport> {
  if (args.out !== undefined) await checkOutPath(args.out, { command: 'warmfold report', document: 'the HTML page' })
  const report = buildSessionReport(await readLog(args), args.price)
  if (args.out === undefined) {
    io.stdout(`${formatReportText(report)}\n`)
    return report
  }
  await writeFile(args.out, renderReportHtml(report)).catch((error: NodeJS.ErrnoException) => {
    throw new RunError(`could not write --out ${JSON.stringify(args.out)}: ${error.code ?? error.message}`, { cause: error })
  })
  io.stdout(`warmfold report: wrote ${args.out}: ${integer(report.totals.requests)} requests, ${integer(report.totals.folds)} fold(s), ${integer(report.totals.breaks)} break(s), numbers from ${report.source === 'ledger' ? 'the cache ledger' : 'provider usage (no cache ledger in this log)'}\n`)
  return report
}
