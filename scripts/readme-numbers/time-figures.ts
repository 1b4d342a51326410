// The root README's "Time" section, and the engine README's background-fold ratio: warmfold alone
// under Anthropic's cache and prices, at each latency profile, folding on the turn's path or in
// the background (with and without prewarm).
import type { BenchReport, RunReport } from '@warmfold/cli'
import type { CommandRuns } from './command-runs.ts'
import type { Generator } from './figure-kit.ts'
import {
  cardinal,
  claim,
  costVs,
  dollars3,
  percent,
  range,
  runOf,
  summaryPrefilled,
  waitsSeconds,
} from './figure-kit.ts'

/** The time table's command, without `--latency` and the fold flags. */
export const TIME_BASE = '--profile anthropic --price anthropic-5m --strategies warmfold'
const WIDE = `${TIME_BASE} --windows 128000,512000`
const NARROW = `${TIME_BASE} --windows 32000 --latency sonnet-class`

type Mode = 'synchronous' | 'background (default)' | 'background, `--prewarm on`'
const FLAGS: Record<Mode, string> = {
  synchronous: '--background-fold off',
  'background (default)': '',
  'background, `--prewarm on`': '--prewarm on',
}

const wide = (runs: CommandRuns, latency: string, mode: Mode): Promise<BenchReport> =>
  runs.bench(`${WIDE} --latency ${latency} ${FLAGS[mode]}`)

/** Milliseconds as seconds with one decimal, `-` for none. */
const s = (ms: number | null) => (ms === null ? '-' : (ms / 1000).toFixed(1))

/** The table's cells for one run: folds, waits, after-swap prefill, summary figures, cost, cost against `sync`. */
function rowCells(run: RunReport, sync: RunReport): string[] {
  const stall = run.stall!
  const committed = stall.folds.filter((fold) => !fold.discarded)
  const swaps = committed.map((fold) => fold.postSwapPrefillMs / 1000)
  return [
    String(committed.length),
    `${s(stall.p50WaitMs)} / ${s(stall.p90WaitMs)} / ${s(stall.maxWaitMs)}`,
    `${Math.min(...swaps).toFixed(2)}–${Math.max(...swaps).toFixed(2)}`,
    String(Math.max(...summaryPrefilled([run]))),
    Math.min(...run.summaryCalls.map((call) => call.hitRatio)).toFixed(3),
    String(run.silentRewrites),
    dollars3(run.costUsd),
    (run.cost.total / sync.cost.total).toFixed(3),
  ]
}

/** The root README's time table: sonnet-class with prewarm, opus-class without, at 128k and 512k. */
export const timeTable: Generator = async (runs) => {
  const lines = [
    '| latency | window | folds run | folds | wait p50 / p90 / max (s) | after swap (s) | summary prefilled (max) | ' +
      'hit | silent | cost | cost vs synchronous |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
  ]
  for (const [latency, modes] of [
    ['sonnet-class', ['synchronous', 'background (default)', 'background, `--prewarm on`']],
    ['opus-class', ['synchronous', 'background (default)']],
  ] as const) {
    const reports = await Promise.all(modes.map((mode) => wide(runs, latency, mode)))
    for (const window of [128_000, 512_000]) {
      const sync = runOf(reports[0]!, 'warmfold', window)
      modes.forEach((mode, index) => {
        const cells = [
          latency,
          window.toLocaleString('en-US'),
          mode,
          ...rowCells(runOf(reports[index]!, 'warmfold', window), sync),
        ]
        lines.push(`| ${cells.join(' | ')} |`)
      })
    }
  }
  return lines.join('\n')
}

/** Every fold's wait of `latency`'s synchronous runs, `42–45 s`. */
const syncWaits =
  (latency: string): Generator =>
  async (runs) => {
    const report = await wide(runs, latency, 'synchronous')
    return `${range(waitsSeconds(report.runs), (value) => String(Math.round(value)))} s`
  }

/** Background runs against synchronous ones, both latencies and windows. */
async function savings(runs: CommandRuns): Promise<number[]> {
  const shares: number[] = []
  for (const latency of ['sonnet-class', 'opus-class']) {
    const sync = await wide(runs, latency, 'synchronous')
    const background = await wide(runs, latency, 'background (default)')
    for (const window of [128_000, 512_000])
      shares.push(costVs(runOf(background, 'warmfold', window), runOf(sync, 'warmfold', window)))
  }
  return shares
}

/** After-swap prefill seconds at `window` on sonnet-class, synchronous and background. */
async function afterSwap(runs: CommandRuns, window: number): Promise<number[]> {
  const reports = [
    await wide(runs, 'sonnet-class', 'synchronous'),
    await wide(runs, 'sonnet-class', 'background (default)'),
  ]
  return reports.flatMap((report) =>
    runOf(report, 'warmfold', window)
      .stall!.folds.filter((fold) => !fold.discarded)
      .map((fold) => fold.postSwapPrefillMs / 1000),
  )
}

/** The 32k runs (sonnet-class): background and synchronous, and with the default pruner at effort high. */
const narrow = (runs: CommandRuns, extra: string, sync: boolean) =>
  runs
    .bench(`${NARROW} ${extra} ${sync ? '--background-fold off' : ''}`)
    .then((report) => runOf(report, 'warmfold', 32_000))

const folds = (run: RunReport) => run.stall!.folds.filter((fold) => !fold.discarded).length

export const TIME_FIGURES: Record<string, Generator> = {
  'time.sync-wait-sonnet': syncWaits('sonnet-class'),
  'time.sync-wait-opus': syncWaits('opus-class'),
  'time.background-never-waits': async (runs) => {
    const background = await Promise.all(
      ['sonnet-class', 'opus-class'].map((latency) => wide(runs, latency, 'background (default)')),
    )
    const waited = Math.max(...waitsSeconds(background.flatMap((report) => report.runs)))
    claim(
      waited === 0,
      `a background fold kept the conversation waiting ${waited.toFixed(1)} s: "never waited" is wrong`,
    )
    return 'never waited'
  },
  'time.fast-steps-wait': async (runs) => {
    const reports = [
      await runs.bench(`${TIME_BASE} --windows 32000,128000,512000 --latency sonnet-class --step-seconds 2`),
      await runs.bench(`${TIME_BASE} --windows 32000,128000,512000 --latency opus-class --step-seconds 0`),
    ]
    const runsAt = (wide: boolean) =>
      reports.flatMap((report) => report.runs).filter((run) => run.window > 32_000 === wide)
    const wideWait = Math.max(...waitsSeconds(runsAt(true)))
    claim(wideWait === 0, `with short tool calls a background fold waited ${wideWait.toFixed(1)} s at 128k–512k`)
    return `0.0 s at 128k–512k and at most ${Math.max(...waitsSeconds(runsAt(false))).toFixed(1)} s at 32k`
  },
  'time.background-saving': async (runs) => {
    const shares = await savings(runs)
    claim(
      shares.every((share) => share < 0),
      'a background run cost as much as or more than the synchronous one: "cost … less" is wrong',
    )
    return `${range(shares.map(Math.abs), (share) => (share * 100).toFixed(1))} %`
  },
  'time.summary-prefilled': async (runs) => {
    const background = await Promise.all(
      ['sonnet-class', 'opus-class'].map((latency) => wide(runs, latency, 'background (default)')),
    )
    return range(summaryPrefilled(background.flatMap((report) => report.runs)), String)
  },
  'time.after-swap-128k': async (runs) => `${range(await afterSwap(runs, 128_000), (value) => value.toFixed(2))} s`,
  'time.after-swap-512k': async (runs) => `${range(await afterSwap(runs, 512_000), (value) => value.toFixed(2))} s`,
  'time.prewarm-after-swap': async (runs) => {
    const report = await wide(runs, 'sonnet-class', 'background, `--prewarm on`')
    return [128_000, 512_000]
      .map((window) => {
        const folds = runOf(report, 'warmfold', window).stall!.folds.filter((fold) => !fold.discarded)
        return `${Math.max(...folds.map((fold) => fold.postSwapPrefillMs / 1000)).toFixed(2)} s`
      })
      .join(' / ')
  },
  'time.prewarm-extra': async (runs) => {
    const prewarm = await wide(runs, 'sonnet-class', 'background, `--prewarm on`')
    const background = await wide(runs, 'sonnet-class', 'background (default)')
    const extra = [128_000, 512_000].map((window) =>
      costVs(runOf(prewarm, 'warmfold', window), runOf(background, 'warmfold', window)),
    )
    claim(
      extra.every((share) => share > 0),
      'prewarm no longer costs more: "for … more money" is wrong',
    )
    return percent(Math.max(...extra))
  },
  'time.ratio-32k': async (runs) => {
    const ratio = (await narrow(runs, '', false)).cost.total / (await narrow(runs, '', true)).cost.total
    claim(
      Math.abs(ratio - 1) < 0.01,
      `at 32k background costs ${ratio.toFixed(3)}× synchronous: "cost the same" is wrong`,
    )
    return `${ratio.toFixed(3)}×`
  },
  'time.pruner-32k-folds': async (runs) => {
    const background = await narrow(runs, '--pruner default --effort high', false)
    const sync = await narrow(runs, '--pruner default --effort high', true)
    claim(folds(background) <= folds(sync), 'the background run makes more folds than the synchronous one')
    return `${cardinal(folds(background))} folds where the synchronous one made ${cardinal(folds(sync))}`
  },
  'time.pruner-32k-more': async (runs) => {
    const share = costVs(
      await narrow(runs, '--pruner default --effort high', false),
      await narrow(runs, '--pruner default --effort high', true),
    )
    claim(share <= 0, 'with the default pruner at effort high the background run is dearer at 32k')
    return percent(share)
  },
}

/** The engine README's "Measured now" ratios: background over synchronous at 32k, 128k and 512k (sonnet-class). */
export const backgroundRatios: Generator = async (runs) => {
  const at32 = (await narrow(runs, '', false)).cost.total / (await narrow(runs, '', true)).cost.total
  const sync = await wide(runs, 'sonnet-class', 'synchronous')
  const background = await wide(runs, 'sonnet-class', 'background (default)')
  const [at128, at512] = [128_000, 512_000].map(
    (window) => runOf(background, 'warmfold', window).cost.total / runOf(sync, 'warmfold', window).cost.total,
  )
  return `${at32.toFixed(3)}× the synchronous cost at 32k, ${at128!.toFixed(3)}× at 128k, ${at512!.toFixed(3)}× at 512k`
}
