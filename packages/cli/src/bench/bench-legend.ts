import type { WorkloadStrategy } from '@warmfold/prefix-cache-testkit'
import { priceText } from '../report/report-format.ts'
import type { BenchReport } from './bench-report.ts'

/** What each column means, then each strategy in the table: printed under the table only, never in `--json`. */
export const COLUMN_LEGEND: ReadonlyArray<readonly [string, string]> = [
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

/** The terms of the coding workload's Fold audit lines. */
export const AUDIT_LEGEND: ReadonlyArray<readonly [string, string]> = [
  [
    'paths',
    'share of the file paths the folded history held that the model still reads verbatim after the fold: in ' +
      'the checkpoint (summary and artifact trail) or the messages the fold kept; - when it held none',
  ],
  ['commands', 'the same for the commands the agent ran'],
  ['errors', 'the same for the error messages tool results printed'],
  [
    'summary alone',
    "the same share in the summary's own text, without the artifact trail (the scripted summarizer is lossy " +
      'on purpose: it keeps a path 9.8 % of the time, a command 0.2 %, an error 9.8 %)',
  ],
  [
    'trail',
    "the largest artifact trail of the run's checkpoints against its budget (artifactTrail.maxTokens), in " +
      'tokens; no trail: the trail is off, or the strategy writes none',
  ],
  [
    'audit vs simulator',
    "how the fold audit's dropped lists agree with the simulator's own record of what each fold lost: " +
      'precision = agreed / dropped (what the audit listed), recall = agreed / lost (what the simulator ' +
      'recorded), 1.000 when there were none; then the counts: agreed of dropped, and lost',
  ],
]

/**
 * The legend under the table: what each column means, the fold audit's terms (`withAudit`: the
 * table has a Fold audit block), the price profile and each strategy in the table. Never in `--json`.
 */
export function legend(report: BenchReport, withAudit: boolean): string[] {
  const strategies = report.workload.strategies.map(
    (strategy) => [strategy, STRATEGY_LEGEND[strategy as WorkloadStrategy] ?? 'not a known strategy'] as const,
  )
  const terms = [...COLUMN_LEGEND, ...(withAudit ? AUDIT_LEGEND : []), ...strategies]
  const width = Math.max(...terms.map(([term]) => term.length))
  const entry = ([term, text]: readonly [string, string]) =>
    wrap(text, LEGEND_TEXT_WIDTH).map((part, index) => `  ${(index ? '' : term).padEnd(width)}  ${part}`)
  const tokens = report.workload.cache === 'simulator' ? 'simulated, 4 characters each' : 'as the cache reported them'
  const prices = wrap(priceText(report.workload.price), LEGEND_TEXT_WIDTH + width + 2).map((part) => `  ${part}`)
  return [
    `Columns (tokens ${tokens}):`,
    ...COLUMN_LEGEND.flatMap(entry),
    ...(withAudit ? ["Fold audit (over all the run's folds):", ...AUDIT_LEGEND.flatMap(entry)] : []),
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
