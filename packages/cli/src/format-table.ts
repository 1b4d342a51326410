import type { BenchReport, RunReport } from './bench-report.ts'

const number = new Intl.NumberFormat('en-US')

/** The human table: one row per window × strategy, with the reduction against `legacy`. */
export function formatTable(report: BenchReport): string {
  const header = ['window', 'strategy', 'folds', 'summary uncached (each call)', 'summary hit', 'session uncached', 'vs legacy', 'ok']
  const rows = report.runs.map((run) => {
    const legacy = report.runs.find((other) => other.window === run.window && other.strategy === 'legacy')
    return [
      number.format(run.window),
      run.strategy,
      String(run.summaryCalls.length),
      run.summaryCalls.map((call) => number.format(call.uncachedTokens)).join(' / ') || '-',
      summaryHit(run),
      number.format(run.sessionUncachedTokens),
      legacy && legacy !== run ? percent(run.sessionUncachedTokens / legacy.sessionUncachedTokens - 1) : '-',
      run.completed && run.silentRewrites === 0 ? 'yes' : run.completed ? `${run.silentRewrites} silent rewrite(s)` : 'INCOMPLETE',
    ]
  })
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] as string).length)))
  const line = (cells: string[]) => cells.map((cell, column) => (column === 0 || column >= 2 ? cell.padStart(widths[column] as number) : cell.padEnd(widths[column] as number))).join('  ')
  const { workload } = report
  const measured = workload.cache === 'simulator' ? `profile ${workload.profile}` : workload.cache === 'llama' ? 'cache: embedded llama.cpp KV cache' : `cache: ${workload.cacheEndpoint}`
  const title = `warmfold bench: ${workload.steps} steps, effort ${workload.effort}, pruner ${workload.pruner}, ${measured}${workload.temperature === null ? '' : `, temperature ${workload.temperature}`}${workload.summaryRoute ? `, summary route ${workload.summaryRoute}` : ''}`
  return [title, '', line(header), line(widths.map((width) => '-'.repeat(width))), ...rows.map(line), '', `summary hit: cached / prompt tokens over all summary calls; session uncached: conversation and summary requests together${workload.cache === 'simulator' ? '' : ' (tokens as the cache reported them)'}.`].join('\n')
}

function summaryHit(run: RunReport): string {
  const prompt = run.summaryCalls.reduce((sum, call) => sum + call.promptTokens, 0)
  const cached = run.summaryCalls.reduce((sum, call) => sum + call.cachedTokens, 0)
  return prompt ? `${((cached / prompt) * 100).toFixed(1)}%` : '-'
}

function percent(ratio: number): string {
  return `${ratio <= 0 ? '−' : '+'}${Math.abs(ratio * 100).toFixed(1)}%`
}
