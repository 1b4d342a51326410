import { formatCount } from '@warmfold/cache-ledger/prefix'
import type { PriceProfile } from '@warmfold/prefix-cache-testkit'
import { DEFAULT_LATENCY_PROFILE } from '@warmfold/prefix-cache-testkit'
import type { BenchReport, RunReport } from './bench-report.ts'
import { textColumns } from '../shared/text-columns.ts'
import { legend } from './bench-legend.ts'

/**
 * A run's cost as the table prints it: dollars when the price profile has a dollar rate, else
 * input-token units (named with `withUnit`, for a line that has no legend: the progress lines).
 */
export function formatRunCost(run: Pick<RunReport, 'cost' | 'costUsd'>, price: PriceProfile, withUnit = false): string {
  if (price.usdPerMillionInput !== null && run.costUsd !== null) return usd(run.costUsd)
  return `${formatCount(Math.round(run.cost.total))}${withUnit ? ' input-token units' : ''}`
}

/**
 * The human table: one row per window × strategy, with the reduction against `legacy`. Its words
 * are `warmfold report`'s: a prompt token is *cached* (read from the cache) or *prefilled*
 * (computed again: *written* to the cache, or *uncached*, neither read nor written).
 */
export function formatTable(report: BenchReport): string {
  const header = [
    'window',
    'strategy',
    'folds',
    'summary prefilled (each call)',
    'summary hit',
    'coverage',
    'wait s (each fold)',
    'session prefilled',
    'cost',
    'vs legacy',
    'efficiency',
    'ok',
  ]
  const rows = report.runs.map((run) => {
    const legacy = report.runs.find((other) => other.window === run.window && other.strategy === 'legacy')
    return [
      formatCount(run.window),
      run.strategy,
      String(run.summaryCalls.length),
      run.summaryCalls.map((call) => formatCount(call.prefilledTokens)).join(' / ') || '-',
      summaryHit(run),
      run.summaryCalls.length ? Math.min(...run.summaryCalls.map((call) => call.regionCoverage)).toFixed(2) : '-',
      waits(run),
      formatCount(run.sessionPrefilledTokens),
      formatRunCost(run, report.workload.price),
      legacy && legacy !== run ? percent(run.cost.total / legacy.cost.total - 1) : '-',
      run.efficiency === null ? '-' : run.efficiency.toFixed(2),
      run.completed && run.silentRewrites === 0
        ? 'yes'
        : run.completed
          ? `${run.silentRewrites} silent rewrite(s)`
          : 'INCOMPLETE',
    ]
  })
  const { widths, line } = textColumns([header, ...rows], (column) => column === 0 || column >= 2)
  const { workload } = report
  const measured =
    workload.cache === 'simulator'
      ? `profile ${workload.profile}`
      : workload.cache === 'llama'
        ? 'cache: embedded llama.cpp KV cache'
        : `cache: ${workload.cacheEndpoint}`
  const clock = [
    workload.turns === 1 ? '' : `, ${workload.turns} turns`,
    workload.idleSeconds === 0 ? '' : `, idle ${workload.idleSeconds} s`,
    workload.stepSeconds === 15 ? '' : `, ${workload.stepSeconds} s per step`,
  ].join('')
  // Like the clock, the latency profile and the background fold are named only when not the default.
  const timing = [
    workload.latency.name === DEFAULT_LATENCY_PROFILE ? '' : `, latency ${workload.latency.name}`,
    workload.backgroundFold ? '' : ', background fold off',
    workload.prewarm ? ', prewarm on' : '',
  ].join('')
  const kind =
    workload.workload === 'coding' ? `coding workload${workload.artifactTrail ? '' : ', artifact trail off'}, ` : ''
  const sampling = [
    workload.temperature === null ? '' : `, temperature ${workload.temperature}`,
    workload.summaryRoute ? `, summary route ${workload.summaryRoute}` : '',
  ].join('')
  const title =
    `warmfold bench: ${kind}${workload.steps} steps${clock}, effort ${workload.effort}, ` +
    `pruner ${workload.pruner}, ${measured}, price ${workload.price.name}${timing}${sampling}`
  const audits = foldAuditLines(report)
  return [
    title,
    '',
    line(header),
    line(widths.map((width) => '-'.repeat(width))),
    ...rows.map(line),
    '',
    ...audits,
    ...legend(report, audits.length > 0),
  ].join('\n')
}

const share = (kept: number, seen: number): string => (seen === 0 ? '-' : `${((kept / seen) * 100).toFixed(1)}%`)

/**
 * The coding workload's fold audit, one line per run with folds: what survived per class with
 * the checkpoint (summary and artifact trail) and with the lossy summary alone, and how the
 * audit's dropped lists agree with the simulator's record.
 */
function foldAuditLines(report: BenchReport): string[] {
  const lines: string[] = []
  for (const run of report.runs) {
    const audit = run.foldAudit
    if (audit === null || audit.folds === 0) continue
    const classes = (['path', 'command', 'error'] as const)
      .map(
        (name) =>
          `${name}s ${share(audit.classes[name].kept, audit.classes[name].seen)} (summary alone ` +
          `${share(audit.classes[name].keptBySummary, audit.classes[name].seen)})`,
      )
      .join(', ')
    const trail =
      audit.trail === null
        ? 'no trail'
        : `trail ≤ ${formatCount(audit.trail.largestTokens)} of ${formatCount(audit.trail.maxTokens)} tokens`
    lines.push(
      `  ${formatCount(run.window)} ${run.strategy}: ${classes}; ${trail}; audit vs simulator: precision ` +
        `${audit.precision.toFixed(3)}, recall ${audit.recall.toFixed(3)} (${audit.agreed} of ` +
        `${audit.auditDropped} dropped, ${audit.simulatorLost} lost)`,
    )
  }
  return lines.length ? ['Fold audit (what the model still reads after each fold, over all folds):', ...lines, ''] : []
}

/** Each fold's wait in seconds, a discarded one marked `d`. */
function waits(run: RunReport): string {
  if (run.stall === null) return '-'
  return (
    run.stall.folds.map((fold) => `${(fold.waitedMs / 1000).toFixed(1)}${fold.discarded ? 'd' : ''}`).join(' / ') || '-'
  )
}

function summaryHit(run: RunReport): string {
  const prompt = run.summaryCalls.reduce((sum, call) => sum + call.promptTokens, 0)
  const cached = run.summaryCalls.reduce((sum, call) => sum + call.cachedTokens, 0)
  return prompt ? `${((cached / prompt) * 100).toFixed(1)}%` : '-'
}

function usd(value: number): string {
  return `$${value.toFixed(value < 10 ? 3 : 2)}`
}

function percent(ratio: number): string {
  return ratio === 0 ? '0.0%' : `${ratio < 0 ? '−' : '+'}${Math.abs(ratio * 100).toFixed(1)}%`
}
