// The root README's "Against the designs agents ship" and "Where the gap with legacy comes from",
// and the CLI README's "Peer shapes": every strategy at 32k, 128k and 512k, under Anthropic's
// 5-minute prices (and, for the claims about price profiles, under the other three).
import type { BenchReport } from '@warmfold/cli'
import type { CommandRuns } from './command-runs.ts'
import type { Generator } from './figure-kit.ts'
import {
  cardinal,
  claim,
  costVs,
  integer,
  lowestCoverage,
  percent,
  perWindow,
  range,
  runOf,
  summaryHit,
  summaryPrefilled,
  waitsSeconds,
  windowName,
} from './figure-kit.ts'

export const STRATEGIES = 'warmfold,legacy,cold,transcript,toolless,long-instruction'
/** The root README's peer run; the CLI README names the same run without `--windows` (the defaults). */
export const PEERS = `--strategies ${STRATEGIES} --windows 32000,128000,512000 --price anthropic-5m`
/** The same with the model's default effort and the default pruner. */
export const GAP = `--effort high --pruner default --strategies ${STRATEGIES} --price anthropic-5m`

const peers = (runs: CommandRuns, price = 'anthropic-5m') => runs.bench(PEERS.replace('anthropic-5m', price))
const gap = (runs: CommandRuns) => runs.bench(GAP)

/** `strategy` against `base` at each window of `report`. */
const versus = (report: BenchReport, strategy: string, base: string) =>
  report.workload.windows.map((window) => costVs(runOf(report, strategy, window), runOf(report, base, window)))

/** Per-window percentages of `strategy` against `base`, checked to be all cheaper or all dearer. */
function sided(report: BenchReport, strategy: string, base: string, side: 'cheaper' | 'dearer'): number[] {
  const shares = versus(report, strategy, base)
  claim(
    shares.every((share) => (side === 'cheaper' ? share < 0 : share > 0)),
    `${strategy} is no longer ${side} than ${base} at every window (${shares.map((share) => percent(share)).join(', ')})`,
  )
  return shares
}

/** The price runs in which some strategy is cheaper than warmfold: where, which, by how much. */
async function cheaperThanWarmfold(runs: CommandRuns, trail = '') {
  const found: Array<{ price: string; window: number; strategy: string; share: number }> = []
  let total = 0
  for (const price of ['deepseek', 'openai', 'anthropic-5m', 'anthropic-1h']) {
    const report = trail
      ? await runs.bench(`--windows 32000 --strategies ${STRATEGIES} --price ${price} ${trail}`)
      : await peers(runs, price)
    for (const window of report.workload.windows) {
      total++
      const warm = runOf(report, 'warmfold', window)
      for (const run of report.runs.filter((entry) => entry.window === window && entry.strategy !== 'warmfold')) {
        const share = costVs(run, warm)
        if (share < 0) found.push({ price, window, strategy: run.strategy, share })
      }
    }
  }
  return { found, total }
}

export const PEER_FIGURES: Record<string, Generator> = {
  'peers.instruction': async (runs) =>
    String(Math.min(...summaryPrefilled((await peers(runs)).runs.filter((run) => run.strategy === 'warmfold')))),
  'peers.cold-region': async (runs) => {
    const cold = (await peers(runs)).runs.filter((run) => ['legacy', 'cold', 'toolless'].includes(run.strategy))
    return range(summaryPrefilled(cold), (value) => `${Math.round(value / 1000)}k`)
  },
  'peers.cheaper': async (runs) => perWindow(sided(await peers(runs), 'warmfold', 'legacy', 'cheaper')),
  'peers.prefilled': async (runs) => {
    const report = await peers(runs)
    return perWindow(
      report.workload.windows.map(
        (window) =>
          runOf(report, 'warmfold', window).sessionPrefilledTokens /
            runOf(report, 'legacy', window).sessionPrefilledTokens -
          1,
      ),
    )
  },
  'peers.output-units': async (runs) => integer(runOf(await peers(runs), 'warmfold', 32_000).cost.output),
  'peers.total-units': async (runs) => integer(runOf(await peers(runs), 'warmfold', 32_000).cost.total),
  'peers.blocking-waits': async (runs) => {
    const others = (await peers(runs)).runs.filter((run) => run.strategy !== 'warmfold')
    return `${range(waitsSeconds(others), (value) => String(Math.round(value)))} s`
  },
  'peers.long-instruction-more': async (runs) =>
    perWindow(sided(await peers(runs), 'long-instruction', 'warmfold', 'dearer')),
  'peers.long-instruction-range': async (runs) =>
    `${range(sided(await peers(runs), 'long-instruction', 'warmfold', 'dearer'), (share) => (share * 100).toFixed(1))} %`,
  'peers.long-instruction-call': async (runs) =>
    integer(
      Math.max(...summaryPrefilled((await peers(runs)).runs.filter((run) => run.strategy === 'long-instruction'))),
    ),
  'peers.transcript-cheaper': async (runs) => perWindow(sided(await peers(runs), 'transcript', 'legacy', 'cheaper')),
  'peers.transcript-range': async (runs) =>
    `${range(sided(await peers(runs), 'transcript', 'legacy', 'cheaper').map(Math.abs), (share) => (share * 100).toFixed(1))} %`,
  'peers.transcript-coverage': async (runs) => {
    const report = await peers(runs)
    return report.workload.windows
      .map((window) => `${Math.round(lowestCoverage(runOf(report, 'transcript', window)) * 100)} %`)
      .join(' / ')
  },
  'peers.transcript-coverage-each': async (runs) => {
    const report = await peers(runs)
    const parts = report.workload.windows.map(
      (window) => `${lowestCoverage(runOf(report, 'transcript', window)).toFixed(2)} at ${windowName(window)}`,
    )
    return `${parts.slice(0, -1).join(', ')} and ${parts.at(-1)}`
  },
  'peers.legacy-coverage': async (runs) => {
    const report = await peers(runs)
    return range(
      report.workload.windows.map((window) => lowestCoverage(runOf(report, 'legacy', window))),
      (value) => String(Number(value.toFixed(3))),
    )
  },
  'peers.transcript-vs-warmfold-32k': async (runs) => {
    const report = await peers(runs)
    const share = costVs(runOf(report, 'transcript', 32_000), runOf(report, 'warmfold', 32_000))
    claim(share > 0, 'transcript is no longer dearer than warmfold at 32k')
    return percent(share)
  },
  'peers.price-profiles': async (runs) => {
    const { found, total } = await cheaperThanWarmfold(runs)
    const points = new Set(found.map((entry) => `${entry.price} ${entry.window}`))
    const head = `no strategy is cheaper than warmfold in ${total - points.size} of the ${total} window × price runs`
    if (!found.length) return head
    const parts = found.map(
      (entry, index) =>
        `${index === 0 || entry.strategy !== found[index - 1]!.strategy ? `\`${entry.strategy}\` is ` : ''}` +
        `${percent(entry.share)}${index === 0 ? ' cheaper' : ''} at ${windowName(entry.window)} under \`${entry.price}\``,
    )
    return `${head}; in the other ${cardinal(points.size)}, ${parts.slice(0, -1).join(', ')}${parts.length > 1 ? ' and ' : ''}${parts.at(-1)}`
  },
  'peers.trail-off': async (runs) => {
    const { found } = await cheaperThanWarmfold(runs)
    claim(
      found.length > 0,
      'no strategy is cheaper than warmfold under any price: the sentence about the artifact trail has nothing to explain',
    )
    const off = await cheaperThanWarmfold(runs, '--artifact-trail off')
    const at32 = off.found.filter((entry) => entry.window === 32_000)
    claim(
      !at32.length,
      `with --artifact-trail off ${at32.map((entry) => entry.strategy).join(', ')} is still cheaper than warmfold at 32k`,
    )
    const margins: number[] = []
    for (const { price } of found) {
      const report = await runs.bench(
        `--windows 32000 --strategies ${STRATEGIES} --price ${price} --artifact-trail off`,
      )
      const warm = runOf(report, 'warmfold', 32_000)
      margins.push(...report.runs.filter((run) => run.strategy !== 'warmfold').map((run) => costVs(run, warm)))
    }
    return percent(Math.min(...margins), 2)
  },
  'peers.trail-tokens': async (runs) => {
    const warm = (await peers(runs)).runs.filter((run) => run.strategy === 'warmfold')
    return integer(Math.max(...warm.flatMap((run) => run.summaryCalls.map((call) => call.audit?.trail?.tokens ?? 0))))
  },
  'peers.efficiency': async (runs) => {
    const report = await peers(runs)
    return report.workload.windows.map((window) => runOf(report, 'warmfold', window).efficiency!.toFixed(4)).join(' / ')
  },
  'peers.efficiency-deepseek': async (runs) =>
    range(
      (await peers(runs, 'deepseek')).runs.filter((run) => run.strategy === 'warmfold').map((run) => run.efficiency!),
      (value) => value.toFixed(4),
    ),
  'peers.efficiency-anthropic-1h': async (runs) =>
    range(
      (await peers(runs, 'anthropic-1h')).runs
        .filter((run) => run.strategy === 'warmfold')
        .map((run) => run.efficiency!),
      (value) => value.toFixed(3),
    ),
  'gap.legacy-prefilled': async (runs) =>
    range(summaryPrefilled((await gap(runs)).runs.filter((run) => run.strategy === 'legacy')), integer),
  'gap.legacy-hit': async (runs) =>
    `${range((await gap(runs)).runs.filter((run) => run.strategy === 'legacy').map(summaryHit), (value) => String(Math.round(value * 100)))} %`,
  'gap.legacy-coverage': async (runs) =>
    `${range((await gap(runs)).runs.filter((run) => run.strategy === 'legacy').map(lowestCoverage), (value) => String(Math.round(value * 100)))} %`,
  'gap.cheaper': async (runs) => perWindow(sided(await gap(runs), 'warmfold', 'legacy', 'cheaper')),
  'gap.cold-more': async (runs) =>
    `${range(sided(await gap(runs), 'cold', 'warmfold', 'dearer'), (share) => String(Math.round(share * 100)))} %`,
  'gap.transcript-more': async (runs) =>
    `${range(sided(await gap(runs), 'transcript', 'warmfold', 'dearer'), (share) => String(Math.round(share * 100)))} %`,
  'gap.toolless-more': async (runs) =>
    `${range(sided(await gap(runs), 'toolless', 'warmfold', 'dearer'), (share) => String(Math.round(share * 100)))} %`,
  'gap.long-instruction-more': async (runs) => {
    const shares = versus(await gap(runs), 'long-instruction', 'warmfold')
    claim(
      shares.every((share) => share > 0),
      'long-instruction is no longer dearer than warmfold at every window',
    )
    return shares.map((share) => percent(share)).join(' / ')
  },
}
