import type { WorkloadStrategy } from '@warmfold/prefix-cache-testkit'
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
  return [title, '', line(header), line(widths.map((width) => '-'.repeat(width))), ...rows.map(line), '', ...legend(report)].join('\n')
}

/** What each column means, then each strategy in the table: printed under the table only, never in `--json`. */
export const COLUMN_LEGEND: ReadonlyArray<readonly [string, string]> = [
  ['folds', 'compactions: summary calls that each fold old history into a checkpoint'],
  ['summary uncached', 'prompt tokens each summary call paid in full (not read from the cache)'],
  ['summary hit', 'cached / prompt tokens over all summary calls'],
  ['session uncached', 'uncached prompt tokens of every request, conversation and summary calls alike'],
  ['vs legacy', 'session uncached against the legacy run at the same window (− is fewer tokens)'],
  ['ok', 'yes: the run completed and each conversation request extended the previous one unless a logged rewrite (checkpoint, prune) came between; else INCOMPLETE or the number of silent rewrites'],
]

/** What each strategy is, for the legend. */
export const STRATEGY_LEGEND: Readonly<Record<WorkloadStrategy, string>> = {
  warmfold: "BasicCompactionEngine as shipped: the summary call replays the conversation's cached prefix (system prompt, tools, effort, messages) plus one instruction",
  legacy: "reference design: prunes the whole history, the part it summarizes included, and sends the summary call without the conversation's effort, temperature and stop, so the call misses the cached prefix",
  cold: 'reference design: a separate summarizer system prompt, no tools and the history flattened into one message, so nothing of the cached prefix is reused',
  transcript: 'peer shape (pi 0.73.1, opencode 1.18.33): own summarizer system prompt, no tools, the history as one text transcript with every tool result cut to its first 2,000 characters, instruction at its end; small and cold, and the summarizer never sees a full tool output',
  toolless: 'peer shape (Codex CLI 0.171.0, Qwen Code 0.24.4): exact replay of the history without any tool definition, instruction last; dropping the tools breaks the cached prefix at its start',
  'long-instruction': "peer shape (Claude Code 2.1.332): warmfold's warm replay with a 6,400-character instruction appended to the last user message instead of a separate message",
}

function legend(report: BenchReport): string[] {
  const strategies = report.workload.strategies.map((strategy) => [strategy, STRATEGY_LEGEND[strategy as WorkloadStrategy] ?? 'not a known strategy'] as const)
  const width = Math.max(...[...COLUMN_LEGEND, ...strategies].map(([term]) => term.length))
  const entry = ([term, text]: readonly [string, string]) => wrap(text, LEGEND_TEXT_WIDTH).map((part, index) => `  ${(index ? '' : term).padEnd(width)}  ${part}`)
  const tokens = report.workload.cache === 'simulator' ? 'simulated, 4 characters each' : 'as the cache reported them'
  return [`Columns (tokens ${tokens}):`, ...COLUMN_LEGEND.flatMap(entry), 'Strategies:', ...strategies.flatMap(entry)]
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

function percent(ratio: number): string {
  return `${ratio <= 0 ? '−' : '+'}${Math.abs(ratio * 100).toFixed(1)}%`
}
