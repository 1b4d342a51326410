import type { Cost, PriceProfile } from '@warmfold/prefix-cache-testkit'
import { costUsd, requestCost, sumCosts } from '@warmfold/prefix-cache-testkit'
import { readGuard, readObservation } from './cache-ledger-events.ts'
import { fieldError, numberField } from './field-error.ts'
import type { SessionLog } from './read-session-log.ts'
import type {
  ObservedRequest,
  ReportFoldAudit,
  ReportFoldTiming,
  ReportFork,
  ReportGuard,
  ReportLineage,
  ReportMarker,
  ReportPruneDecision,
  ReportRequest,
  ReportTotals,
  RequestTokens,
  SessionReport,
} from './report-model.ts'
import { readFoldAudit } from './fold-audit-events.ts'
import { FoldRows } from './fold-rows.ts'
import { readFoldTiming } from './fold-timing-events.ts'
import { addForkEvent, readLineage } from './fork-events.ts'
import { readPruneDecision } from './prune-decision-events.ts'
import type { HeaderEnvelope } from './usage-requests.ts'
import { headerEnvelope, USAGE_BREAK_SHARE, usageRequest } from './usage-requests.ts'

/**
 * What `warmfold report` shows about `log`, priced with `price`. A log with `cache/observation`
 * events is read from them alone (every request the ledger saw, summary calls and retries
 * included); a log without them from the provider usage on its `assistant/message` and
 * `compaction/summary` events. Folds and prunes come from `compaction/summary` and
 * `compaction/prune` either way.
 * @throws RunError naming the file and line of an event whose fields are not what its writer logs.
 */
export function buildSessionReport(log: SessionLog, price: PriceProfile): SessionReport {
  const source = log.events.some((event) => event.type === 'cache/observation') ? 'ledger' : 'usage'
  const logged: ObservedRequest[] = []
  const markers: ReportMarker[] = []
  const guards: ReportGuard[] = []
  const pruneDecisions: ReportPruneDecision[] = []
  const foldTimings: ReportFoldTiming[] = []
  const foldAudits: ReportFoldAudit[] = []
  const forks: ReportFork[] = []
  const foldRows = new FoldRows()
  let forkOf: ReportLineage | null = null
  let header: HeaderEnvelope | undefined
  let headerChanged = false
  for (const event of log.events) {
    const line = event.seq + 1
    const where = log.locate(event.seq)
    const data = event.data as unknown as Record<string, unknown>
    if (event.type === 'cache/observation' && source === 'ledger') logged.push(readObservation(data, line, where))
    if ((event.type === 'assistant/message' || event.type === 'compaction/summary') && source === 'usage') {
      const since = markers.filter((marker) => marker.afterRequest === logged.length)
      logged.push(
        usageRequest(event.type, data, line, where, { previous: logged.at(-1), since, headerChanged, header }),
      )
      headerChanged = false
    }
    if (event.type === 'cache/guard') guards.push({ line, afterRequest: logged.length, ...readGuard(data, where) })
    if (event.type === 'compaction/prune-decision')
      pruneDecisions.push({ line, afterRequest: logged.length, ...readPruneDecision(data, where) })
    if (event.type === 'compaction/audit')
      foldAudits.push({ line, afterRequest: logged.length, ...readFoldAudit(log.events, event.seq, where) })
    if (event.type === 'compaction/start') foldRows.start(data, line, logged.length, where)
    if (event.type === 'compaction/end') {
      const timing = readFoldTiming(data, where)
      if (timing) foldTimings.push({ line, afterRequest: logged.length, ...timing })
      foldRows.end(data, line, logged.length, timing, price, where)
    }
    // Compared as strings: the fork events are declared by @warmfold/agent-loop.
    const type: string = event.type
    if (type === 'agent/fork-start' || type === 'agent/fork-end')
      addForkEvent(forks, type, data, line, logged.length, where)
    if (type === 'agent/fork') forkOf = readLineage(data, where)
    if (event.type === 'compaction/summary' || event.type === 'compaction/prune')
      addMarker(markers, event.type === 'compaction/summary' ? 'fold' : 'prune', data, line, logged.length, where)
    if (event.type === 'compaction/summary') {
      const { messages, tokens } = markers.at(-1)!
      foldRows.summary(String(data.compactionId), line, logged.length, { messages, tokens })
    }
    if (event.type === 'request/header') {
      header = headerEnvelope(data, where)
      if ((data as { reason?: unknown }).reason !== 'initial') headerChanged = true
    }
  }
  const { requests, totals, notes } = pricedRequests(logged, markers, price)
  const { folds, totals: foldTotals } = foldRows.rows(requests, foldAudits, price, source === 'usage')
  const sourceNote =
    source === 'ledger'
      ? `Tokens, divergences and break causes come from the cache ledger's cache/observation events: every ` +
        'request the ledger saw, summary calls and retries included.'
      : 'This log has no cache/observation events (it was written without the cache ledger): the numbers are the ' +
        'provider usage logged on assistant/message (conversation requests) and compaction/summary (summary ' +
        'calls) events, so failed requests and summary calls that did not commit are missing. A break here is a ' +
        `request whose prefilled tokens (not read from the cache) exceed its prompt's growth over the previous ` +
        `request by more than ${USAGE_BREAK_SHARE * 100}% of its prompt; its cause is inferred from what the log ` +
        'records in between, not measured.'
  return {
    file: log.file,
    sessionId: log.sessionId,
    source,
    price,
    requests,
    markers,
    guards,
    pruneDecisions,
    foldTimings,
    folds,
    foldTotals,
    foldAudits,
    forks,
    forkOf,
    totals,
    notes: [sourceNote, ...(log.notes ?? []), ...notes],
  }
}

/**
 * `logged` numbered, priced with `price` and summed (`markers`: the folds and prunes between them),
 * with a note for each kind of gap in their numbers. What every source of a report ends with.
 */
export function pricedRequests(
  logged: readonly ObservedRequest[],
  markers: readonly ReportMarker[],
  price: PriceProfile,
): { requests: ReportRequest[]; totals: ReportTotals; notes: string[] } {
  const missing = { cached: 0, written: 0, uncached: 0, output: 0 }
  const costs: Cost[] = []
  const requests = logged.map((request, index): ReportRequest => {
    const billed = billedTokens(request.tokens, missing)
    if (!billed) return { number: index + 1, ...request, billed: null }
    const cost = requestCost(
      {
        cachedTokens: billed.cached,
        uncachedTokens: billed.uncached + billed.written,
        cacheWriteTokens: billed.written,
        outputTokens: billed.output,
      },
      price,
    )
    costs.push(cost)
    return { number: index + 1, ...request, billed: { ...billed, cost: cost.total } }
  })
  return { requests, ...totalsOf(requests, markers, sumCosts(costs), price, missing) }
}

/** Adds a fold or prune marker; consecutive prunes between the same two requests merge. */
function addMarker(
  markers: ReportMarker[],
  kind: 'fold' | 'prune',
  data: Record<string, unknown>,
  line: number,
  afterRequest: number,
  where: string,
): void {
  const seqs = data.shadowedSeqs
  const type = kind === 'fold' ? 'compaction/summary' : 'compaction/prune'
  if (!Array.isArray(seqs)) throw fieldError(where, `${type} shadowedSeqs`, 'an array of seqs', seqs)
  const tokens = numberField(where, `${type} shadowedTokenCount`, data.shadowedTokenCount)
  const last = markers.at(-1)
  if (kind === 'prune' && last?.kind === 'prune' && last.afterRequest === afterRequest) {
    markers[markers.length - 1] = {
      ...last,
      count: last.count + 1,
      messages: last.messages + seqs.length,
      tokens: last.tokens + tokens,
    }
    return
  }
  markers.push({ kind, afterRequest, line, count: 1, messages: seqs.length, tokens })
}

/** Sums the requests, with a note for each kind of gap in their numbers. */
function totalsOf(
  requests: readonly ReportRequest[],
  markers: readonly ReportMarker[],
  cost: Cost,
  price: PriceProfile,
  missing: Record<Bucket, number>,
): { totals: ReportTotals; notes: string[] } {
  const purposes = new Map<string, number>()
  const sums = { cached: 0, written: 0, uncached: 0, output: 0 }
  let withoutUsage = 0
  for (const request of requests) {
    purposes.set(request.purpose, (purposes.get(request.purpose) ?? 0) + 1)
    if (request.billed) for (const bucket of BUCKETS) sums[bucket] += request.billed[bucket]
    else withoutUsage++
  }
  const prompt = sums.cached + sums.written + sums.uncached
  const notes: string[] = []
  if (withoutUsage)
    notes.push(
      `${withoutUsage} of ${requests.length} requests have no token numbers in the log: they are drawn as "no ` +
        'usage" and left out of the sums and the cost.',
    )
  for (const bucket of BUCKETS) {
    if (missing[bucket])
      notes.push(`${missing[bucket]} request(s) with token numbers did not report ${UNREPORTED[bucket]}: counted as 0.`)
  }
  const totals: ReportTotals = {
    requests: requests.length,
    purposes: [...purposes],
    prompt,
    ...sums,
    hitRatio: prompt ? sums.cached / prompt : null,
    withoutUsage,
    folds: markers.filter((marker) => marker.kind === 'fold').length,
    prunes: markers.filter((marker) => marker.kind === 'prune').reduce((sum, marker) => sum + marker.count, 0),
    breaks: requests.filter((request) => request.break).length,
    cost,
    costUsd: costUsd(cost, price),
  }
  return { totals, notes }
}

const BUCKETS = ['cached', 'written', 'uncached', 'output'] as const
type Bucket = (typeof BUCKETS)[number]

/** What a request that leaves out a bucket did not report, for the notes. */
const UNREPORTED = {
  cached: 'cache reads',
  written: 'cache writes',
  uncached: 'uncached input',
  output: 'output tokens',
}

/** The buckets a request is priced with, or undefined when it has no numbers at all. */
function billedTokens(
  tokens: RequestTokens,
  missing: Record<Bucket, number>,
): { cached: number; written: number; uncached: number; output: number } | undefined {
  if (tokens.prompt === null && tokens.cached === null && tokens.written === null && tokens.uncached === null)
    return undefined
  const cached = tokens.cached ?? 0
  const written = tokens.written ?? 0
  let uncached = tokens.uncached
  if (uncached === null && tokens.prompt !== null) uncached = Math.max(0, tokens.prompt - cached - written)
  if (tokens.cached === null) missing.cached++
  if (tokens.written === null) missing.written++
  if (uncached === null) missing.uncached++
  if (tokens.output === null) missing.output++
  return { cached, written, uncached: uncached ?? 0, output: tokens.output ?? 0 }
}
