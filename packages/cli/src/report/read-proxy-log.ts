import { isRecord } from '@warmfold/cache-ledger/prefix'
import type { PriceProfile } from '@warmfold/prefix-cache-testkit'
import { linesOf } from '../shared/file-lines.ts'
import { RunError } from '../shared/run-error.ts'
import { pricedRequests } from './build-session-report.ts'
import { FoldRows } from './fold-rows.ts'
import type { SessionLog } from './read-session-log.ts'
import type { ObservedRequest, SessionReport } from './report-model.ts'
import { integer } from './report-format.ts'

/** The `warmfold` record of a proxy log line, as far as the report reads it. */
interface ProxyRecord {
  readonly log: string
  readonly kind: string
  readonly api?: string | null
  readonly session?: string | null
  readonly usage?: {
    inputTokens: number
    cacheReadTokens: number
    cacheWriteTokens: number
    outputTokens: number
  } | null
  readonly predictedCachedTokens?: number
  readonly tokenScale?: string
  readonly phrase?: string
  readonly cause?: string
  readonly explanation?: string
  readonly providerDiagnosis?: string
  readonly unreadable?: string
  readonly rewrite?: {
    sent: string
    recognition: { agent: string }
    predictedUncachedTokens: { original: number; rewritten: number }
    savedTokens: number
    predictedCachedTokens: number
    reportedCachedTokens: number | null
  }
  readonly failOpen?: { reason: string }
  /** A rewrite's answer that showed no text in time and went on as it came: why. */
  readonly holdReleased?: string
}

/** What the first line of a `warmfold proxy` log carries (`warmfold.log`). */
const PROXY_LOG_FORMAT = 'warmfold-proxy/1'

function proxyRecord(value: unknown): ProxyRecord | undefined {
  return isRecord(value) && isRecord(value.warmfold) && value.warmfold.log === PROXY_LOG_FORMAT
    ? (value.warmfold as unknown as ProxyRecord)
    : undefined
}

/** Whether `file` is a `warmfold proxy` log (its first line says so). */
export async function isProxyLog(file: string): Promise<boolean> {
  for await (const [, line] of linesOf(file)) {
    try {
      return proxyRecord(JSON.parse(line)) !== undefined
    } catch {
      return false
    }
  }
  return false
}

/**
 * What `warmfold report` shows about a `warmfold proxy` log: every conversation request and
 * compaction (summary request) of every session, with the tokens the provider reported
 * (cached, written, uncached) and the break the proxy found, with its cause and first
 * divergence, priced with `price`.
 * @throws RunError naming the file and line of a line that is not a proxy log line.
 */
export function buildProxyReport(file: string, price: PriceProfile): Promise<SessionReport> {
  return proxyReportOf(file, parsedLines(file), price, 'log')
}

/** The lines of `file`, parsed, numbered from 1. @throws RunError naming the file and line of one that is not JSON. */
async function* parsedLines(file: string): AsyncGenerator<readonly [number, unknown, string]> {
  for await (const [line, text] of linesOf(file)) {
    try {
      yield [line, JSON.parse(text), `${file}:${line}`]
    } catch (error) {
      throw new RunError(`cannot report ${file}:${line}: not JSON (${(error as Error).message})`)
    }
  }
}

/**
 * {@link buildProxyReport} of the lines a `warmfold proxy --store` replica wrote to a session of an
 * SQL store (`proxy/exchange` events, each the log line without its body): "line N" is the event
 * at seq N − 1.
 * @throws RunError naming the session and seq of an event that is not a proxy log line.
 */
export function buildProxyStoreReport(log: SessionLog, price: PriceProfile): Promise<SessionReport> {
  async function* lines(): AsyncGenerator<readonly [number, unknown, string]> {
    for (const [seq, event] of log.events.entries())
      yield [
        seq + 1,
        event.type === 'proxy/exchange' ? event.data : undefined,
        `${log.file} session ${log.sessionId} seq ${seq}`,
      ]
  }
  return proxyReportOf(`${log.file} session ${log.sessionId}`, lines(), price, 'store')
}

/** Whether `events` are what a `warmfold proxy --store` replica writes. */
export function isProxyStoreSession(events: readonly { type: string }[]): boolean {
  return events[0]?.type === 'proxy/exchange'
}

async function proxyReportOf(
  file: string,
  parsed: AsyncIterable<readonly [number, unknown, string]>,
  price: PriceProfile,
  kind: 'log' | 'store',
): Promise<SessionReport> {
  const logged: ObservedRequest[] = []
  const sessions = new Set<string>()
  let skipped = 0
  let unreadable = 0
  for await (const [line, value, where] of parsed) {
    const record = proxyRecord(value)
    if (!record) throw new RunError(`cannot report ${where}: not a warmfold proxy log line (no "warmfold" record)`)
    if (record.kind === 'unreadable') unreadable++
    if (record.kind !== 'conversation' && record.kind !== 'compaction') {
      skipped++
      continue
    }
    if (record.session) sessions.add(record.session)
    logged.push(observed(record, line))
  }
  const { requests, totals, notes } = pricedRequests(logged, [], price)
  // A proxy log has no compaction brackets: no fold rows, and totals of nothing.
  const { folds, totals: foldTotals } = new FoldRows().rows(requests, [], price, false)
  return {
    file,
    sessionId: `${integer(sessions.size)} session(s) of a warmfold proxy ${kind}`,
    source: 'proxy',
    price,
    requests,
    markers: [],
    guards: [],
    pruneDecisions: [],
    foldTimings: [],
    folds,
    foldTotals,
    foldAudits: [],
    forks: [],
    forkOf: null,
    totals,
    notes: [
      'Numbers from a warmfold proxy log: the tokens the provider reported for each request; breaks, their cause and ' +
        'first divergence as the proxy found them (predicted from the first divergent byte in provider render order ' +
        "against the session's last conversation request). Compactions are the summary requests it recognised.",
      ...(skipped
        ? [
            `${integer(skipped)} line(s) are not conversation or summary requests (${integer(unreadable)} unreadable ` +
              'bodies, the rest count_tokens or model lists): not in the report.',
          ]
        : []),
      ...notes,
    ],
  }
}

/** One proxy log line as a report request. */
function observed(record: ProxyRecord, line: number): ObservedRequest {
  const usage = record.usage ?? null
  const tokens = usage
    ? {
        prompt: usage.inputTokens,
        cached: usage.cacheReadTokens,
        written: usage.cacheWriteTokens,
        uncached: Math.max(0, usage.inputTokens - usage.cacheReadTokens - usage.cacheWriteTokens),
        output: usage.outputTokens,
      }
    : { prompt: null, cached: null, written: null, uncached: null, output: null }
  const brokeBy = record.cause && record.cause !== 'none' && record.cause !== 'first' ? record.cause : undefined
  const diagnosis = record.providerDiagnosis ? ` (the provider says: ${record.providerDiagnosis})` : ''
  const predicted =
    record.predictedCachedTokens === undefined
      ? ''
      : `; ${integer(record.predictedCachedTokens)} cached tokens predicted (${record.tokenScale ?? 'chars/4'})`
  const rewrite = record.rewrite
  const compaction = record.failOpen
    ? `; failed open: ${record.failOpen.reason}`
    : rewrite
      ? `; rewrite (${rewrite.recognition.agent}) ${rewrite.sent === 'rewritten' ? 'sent warm' : 'dry run'}: ` +
        `prefilled ${integer(rewrite.predictedUncachedTokens.original)} → ` +
        `${integer(rewrite.predictedUncachedTokens.rewritten)} tokens predicted, ${integer(rewrite.savedTokens)} saved`
      : ''
  const released = record.holdReleased ? `; its answer went on unheld: ${record.holdReleased}` : ''
  return {
    line,
    purpose: record.kind,
    route: record.api ?? null,
    tokens,
    break:
      brokeBy && record.kind === 'conversation'
        ? { cause: brokeBy, explanation: `${record.explanation ?? record.phrase ?? ''}${diagnosis}` }
        : null,
    detail:
      `session ${record.session ?? '?'}: ${record.phrase ?? 'no divergence'}${predicted}${compaction}${released}` +
      (record.kind === 'compaction' && brokeBy ? ` (${record.explanation ?? brokeBy})` : ''),
  }
}
