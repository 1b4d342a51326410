import type { BenchReport, RunReport } from '@warmfold/cli'
import type { CommandRuns } from './command-runs.ts'

/**
 * A sentence around a figure says something the numbers no longer show (a design that was cheaper
 * no longer is): the sentence has to be rewritten by hand, so `--write` writes the other numbers and
 * reports this one.
 */
export class ClaimError extends Error {
  override readonly name = 'ClaimError'
}

/** Throws a {@link ClaimError} with `message` unless `holds`. */
export function claim(holds: boolean, message: string): void {
  if (!holds) throw new ClaimError(message)
}

/** What a named figure or table is made from: the runs, and the text it writes. */
export type Generator = (runs: CommandRuns) => Promise<string>

/** The run of `strategy` at `window` in `report`. */
export function runOf(report: BenchReport, strategy: string, window: number): RunReport {
  const run = report.runs.find((entry) => entry.strategy === strategy && entry.window === window)
  if (!run) throw new Error(`the report has no ${strategy} run at ${window}`)
  return run
}

/** The windows of `report`, in order. */
export const windowsOf = (report: BenchReport): number[] => report.workload.windows

/** `run`'s cost over `base`'s, minus 1: + dearer, − cheaper. */
export const costVs = (run: RunReport, base: RunReport): number => run.cost.total / base.cost.total - 1

/** `0.1314` → `13.1 %` (the share as a positive percentage, `digits` decimals). */
export const percent = (share: number, digits = 1): string => `${Math.abs(share * 100).toFixed(digits)} %`

/** `1234567` → `1,234,567`. */
export const integer = (value: number): string => Math.round(value).toLocaleString('en-US')

/** `a–b` of numbers formatted with `format`, or one number when both round the same. */
export function range(values: readonly number[], format: (value: number) => string): string {
  const low = format(Math.min(...values))
  const high = format(Math.max(...values))
  return low === high ? low : `${low}–${high}`
}

/** Percentages `13.1 % / 18.2 % / 18.9 %`, one per value. */
export const perWindow = (values: readonly number[], digits = 1): string =>
  values.map((value) => percent(value, digits)).join(' / ')

/** Each summary call's prefilled tokens over `runs`. */
export const summaryPrefilled = (runs: readonly RunReport[]): number[] =>
  runs.flatMap((run) => run.summaryCalls.map((call) => call.prefilledTokens))

/** Each fold's wait in seconds over `runs` (discarded folds included). */
export const waitsSeconds = (runs: readonly RunReport[]): number[] =>
  runs.flatMap((run) => (run.stall?.folds ?? []).map((fold) => fold.waitedMs / 1000))

/** cached / prompt tokens over `run`'s summary calls. */
export function summaryHit(run: RunReport): number {
  const prompt = run.summaryCalls.reduce((sum, call) => sum + call.promptTokens, 0)
  const cached = run.summaryCalls.reduce((sum, call) => sum + call.cachedTokens, 0)
  return prompt ? cached / prompt : 0
}

/** The lowest region coverage of `run`'s summary calls (1 without calls). */
export const lowestCoverage = (run: RunReport): number =>
  Math.min(1, ...run.summaryCalls.map((call) => call.regionCoverage))

const ORDINALS = ['zeroth', 'first', 'second', 'third', 'fourth', 'fifth', 'sixth', 'seventh', 'eighth', 'ninth']
const CARDINALS = ['no', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine']

/** `6` → `sixth`. */
export const ordinal = (value: number): string => ORDINALS[value] ?? `${value}th`
/** `5` → `five`. */
export const cardinal = (value: number): string => CARDINALS[value] ?? String(value)

/** `32000` → `32k`. */
export const windowName = (window: number): string => `${Math.round(window / 1000)}k`

/** `$3.151` (three decimals whatever the size, as the time table writes costs). */
export const dollars3 = (value: number | null): string => (value === null ? '-' : `$${value.toFixed(3)}`)
