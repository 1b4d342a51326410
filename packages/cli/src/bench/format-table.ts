import type { PriceProfile, WorkloadStrategy } from '@warmfold/prefix-cache-testkit'
import { DEFAULT_LATENCY_PROFILE } from '@warmfold/prefix-cache-testkit'
import { priceText } from '../report/report-format.ts'
import type { BenchReport, RunReport } from './bench-report.ts'

const number = new Intl.NumberFormat('en-US')

/**
 * A run's cost as the table prints it: dollars when the price profile has a dollar rate, else
 * input-token units (named with `withUnit`, for a line that has no legend: the progress lines).
 */
export function formatRunCost(run: Pick<RunReport, 'cost' | 'costUsd'>, price: PriceProfile, withUnit = false): string {
  if (price.usdPerMillionInput !== null && run.costUsd !== null) return usd(run.costUsd)
  return `${number.format(Math.round(run.cost.total))}${withUnit ? ' input-token units' : ''}`
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
      number.format(run.window),
      run.strategy,
      String(run.summaryCalls.length),
      run.summaryCalls.map((call) => number.format(call.uncachedTokens)).join(' / ') || '-',
      summaryHit(run),
      run.summaryCalls.length ? Math.min(...run.summaryCalls.map((call) => call.regionCoverage)).toFixed(2) : '-',
      waits(run),
      number.format(run.sessionUncachedTokens),
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
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => (row[column] as string).length)),
  )
  const line = (cells: string[]) =>
    cells
      .map((cell, column) =>
        column === 0 || column >= 2 ? cell.padStart(widths[column] as number) : cell.padEnd(widths[column] as number),
      )
      .join('  ')
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
    ...legend(report),
  ].join('\n')
}

/** What each column means, then each strategy in the table: printed under the table only, never in `--json`. */
const COLUMN_LEGEND: ReadonlyArray<readonly [string, string]> = [
  ['folds', 'compactions: summary calls that each fold old history into a checkpoint'],
  [
    'summary prefilled',
    'prompt tokens each summary call prefilled: not read from the cache (written to it or uncached), paid in full',
  ],
  ['summary hit', 'cached / prompt tokens over all summary calls'],
  [
    'coverage',
    "the lowest regionCoverage of the run's summary calls: the share of the summarized history's characters the " +
      'summarizer saw verbatim (1.00 = all of it)',
  ],
  [
    'wait s',
    "seconds each fold kept the conversation waiting, on the latency profile's clock (a synchronous fold: its " +
      'whole summary call; a background one: only what was left at the pressure threshold; d: a discarded fold, ' +
      'paid in the cost); - for a real cache',
  ],
  [
    'session prefilled',
    'prefilled prompt tokens of every request, conversation and summary calls alike: what warmfold report shows ' +
      'as written + uncached',
  ],
  [
    'cost',
    'what the whole session cost under the price profile below: cached, written and uncached prompt tokens and ' +
      'output tokens of every request (in dollars when the profile has a dollar rate, else in ' +
      'uncached-input-token units)',
  ],
  ['vs legacy', 'cost against the legacy run at the same window (− is cheaper)'],
  [
    'efficiency',
    "floor / cost, where the floor is what the run's own requests would cost if every prompt token were " +
      'prefilled once and every repeat read from the cache (1.00 = nothing wasted)',
  ],
  [
    'ok',
    'yes: the run completed and each conversation request extended the previous one unless a logged rewrite ' +
      '(checkpoint, prune) came between; else INCOMPLETE or the number of silent rewrites',
  ],
]

/** What each strategy is, for the legend. */
const STRATEGY_LEGEND: Readonly<Record<WorkloadStrategy, string>> = {
  warmfold:
    "BasicCompactionEngine as shipped: the summary call replays the conversation's cached prefix (system prompt, " +
    'tools, effort, messages) plus one instruction',
  legacy:
    'reference design: prunes the whole history, the part it summarizes included, and sends the summary call ' +
    "without the conversation's effort, temperature and stop, so the call misses the cached prefix",
  cold:
    'reference design: a separate summarizer system prompt, no tools and the history flattened into one ' +
    'message, so nothing of the cached prefix is reused',
  transcript:
    'peer shape (pi 0.73.1, opencode 1.18.33): own summarizer system prompt, no tools, the history as one text ' +
    'transcript with every tool result cut to its first 2,000 characters, instruction at its end; small and ' +
    'cold, and the summarizer never sees a full tool output',
  toolless:
    'peer shape (Codex CLI 0.171.0, Qwen Code 0.24.4): exact replay of the history without any tool definition, ' +
    'instruction last; dropping the tools breaks the cached prefix at its start',
  'long-instruction':
    "peer shape (Claude Code 2.1.332): warmfold's warm replay with a 6,400-character instruction appended to the " +
    'last user message instead of a separate message',
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
        : `trail ≤ ${number.format(audit.trail.largestTokens)} of ${number.format(audit.trail.maxTokens)} tokens`
    lines.push(
      `  ${number.format(run.window)} ${run.strategy}: ${classes}; ${trail}; audit vs simulator: precision ` +
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

function legend(report: BenchReport): string[] {
  const strategies = report.workload.strategies.map(
    (strategy) => [strategy, STRATEGY_LEGEND[strategy as WorkloadStrategy] ?? 'not a known strategy'] as const,
  )
  const width = Math.max(...[...COLUMN_LEGEND, ...strategies].map(([term]) => term.length))
  const entry = ([term, text]: readonly [string, string]) =>
    wrap(text, LEGEND_TEXT_WIDTH).map((part, index) => `  ${(index ? '' : term).padEnd(width)}  ${part}`)
  const tokens = report.workload.cache === 'simulator' ? 'simulated, 4 characters each' : 'as the cache reported them'
  const prices = wrap(priceText(report.workload.price), LEGEND_TEXT_WIDTH + width + 2).map((part) => `  ${part}`)
  return [
    `Columns (tokens ${tokens}):`,
    ...COLUMN_LEGEND.flatMap(entry),
    'Price:',
    ...prices,
    'Strategies:',
    ...strategies.flatMap(entry),
  ]
}

/** Characters of legend text per line, so a legend line stays within 100 columns. */
const LEGEND_TEXT_WIDTH = 78

/** Splits `text` at spaces into lines of at most `width` characters (a longer word gets a line of its own). */
function wrap(text: string, width: number): string[] {
  const lines: string[] = []
  let line = ''
  for (const word of text.split(' ')) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line)
      line = word
    } else {
      line = line ? `${line} ${word}` : word
    }
  }
  return [...lines, line]
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
