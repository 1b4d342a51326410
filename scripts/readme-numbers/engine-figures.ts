// The engine README (packages/compaction/compaction-basic): whether a prune-only pass pays, and
// what idle folds save.
import type { Generator } from './figure-kit.ts'
import { claim, costVs, percent, range, runOf, summaryPrefilled, windowName } from './figure-kit.ts'

/** How each price is measured: Anthropic's prices with Anthropic's cache rules. */
const PRICES: ReadonlyArray<readonly [string, string]> = [
  ['deepseek', '--price deepseek'],
  ['openai', '--price openai'],
  ['anthropic-5m', '--profile anthropic --price anthropic-5m'],
  ['anthropic-1h', '--profile anthropic --price anthropic-1h'],
]

/** The row measured before the prune decision, kept as it was measured (the code that made it is gone). */
const BEFORE_ROW =
  '| before (every prune-only pass landed) | deepseek +14.3 %, openai +12.0 %, anthropic-5m +39.0 %, ' +
  'anthropic-1h +51.0 % | +6.6 %, +6.4 %, +12.0 %, +15.2 % | +3.7 %, +4.7 %, +16.1 %, +20.4 % |'

/** Dollars as the bench's table writes them: `$0.958`, `$12.42`. */
const usd = (value: number | null) => `$${value!.toFixed(value! < 10 ? 3 : 2)}`

const signed = (share: number) => `${share < 0 ? '−' : '+'}${percent(share)}`

/** The prune table: warmfold's session cost with the default pruner against none, per price and window. */
export const pruneTable: Generator = async (runs) => {
  const shares = new Map<number, number[]>()
  for (const [name, flags] of PRICES) {
    const base = `--strategies warmfold,legacy ${flags}`
    const withPruner = await runs.bench(`${base} --pruner default`)
    const without = await runs.bench(`${base} --pruner none`)
    for (const window of withPruner.workload.windows) {
      const pruned = runOf(withPruner, 'warmfold', window)
      const plain = runOf(without, 'warmfold', window)
      const share = costVs(pruned, plain)
      claim(share <= 0, `the default pruner costs more than none: warmfold at ${windowName(window)} under ${name}`)
      shares.set(window, [...(shares.get(window) ?? []), share])
    }
  }
  const columns = [...shares.keys()]
  // The first column names each price; the others list them in the same order.
  const now = columns.map((window, column) =>
    shares
      .get(window)!
      .map((share, index) => (column === 0 ? `${PRICES[index]![0]} ${signed(share)}` : signed(share)))
      .join(', '),
  )
  return [
    `| price | ${columns.map(windowName).join(' | ')} |`,
    `|---|${columns.map(() => '---').join('|')}|`,
    BEFORE_ROW,
    `| now (background folds on, the default) | ${now.join(' | ')} |`,
  ].join('\n')
}

const IDLE =
  '--turns 6 --idle 900 --profile anthropic --price anthropic-5m --strategies warmfold,legacy --idle-compaction'

export const ENGINE_FIGURES: Record<string, Generator> = {
  'engine.idle-difference': async (runs) => {
    const on = await runs.bench(`${IDLE} on`)
    const off = await runs.bench(`${IDLE} off`)
    return on.workload.windows
      .map((window) => {
        const a = runOf(on, 'warmfold', window)
        const b = runOf(off, 'warmfold', window)
        const share = costVs(a, b)
        claim(share < 0, `idle folds no longer save at ${windowName(window)}`)
        return `${usd(a.costUsd)} vs ${usd(b.costUsd)} at ${windowName(window)} (${signed(share)})`
      })
      .join(', ')
  },
  'engine.idle-prefilled': async (runs) => {
    const on = await runs.bench(`${IDLE} on`)
    const off = await runs.bench(`${IDLE} off`)
    return on.workload.windows
      .map((window) => {
        const share =
          runOf(on, 'warmfold', window).sessionPrefilledTokens / runOf(off, 'warmfold', window).sessionPrefilledTokens -
          1
        return `${share < 0 ? '−' : '+'}${Math.abs(Math.round(share * 100))} %`
      })
      .join(', ')
  },
  'engine.idle-summary-prefilled': async (runs) => {
    const reports = [await runs.bench(`${IDLE} on`), await runs.bench(`${IDLE} off`)]
    return range(
      summaryPrefilled(reports.flatMap((report) => report.runs.filter((run) => run.strategy === 'warmfold'))),
      String,
    )
  },
}
