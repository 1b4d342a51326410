import { describe, expect, it } from 'vitest'
import type { BenchReport } from '../src/index.ts'
import { cli } from './run-cli.ts'

// What the table prints, its legend and the --json document say the same thing in the same words.

const RUN = ['bench', '--workload', 'coding', '--windows', '8000', '--steps', '40', '--strategies', 'warmfold,legacy']

/** The table of {@link RUN}, run once for both tests that read it (a run takes about a second). */
let tableRun: ReturnType<typeof cli> | undefined
const tableOutput = () => (tableRun ??= cli(RUN))

/** The legend block of `table` that starts with `title`: each term (the lines whose text starts in column 3). */
function legendTerms(table: string, title: string): string[] {
  const lines = table.split('\n')
  const start = lines.findIndex((line) => line.startsWith(title))
  expect(start, `a legend block "${title}"`).toBeGreaterThan(-1)
  const terms: string[] = []
  for (const line of lines.slice(start + 1)) {
    if (!line.startsWith('  ')) break
    const term = /^ {2}(\S.*?) {2,}/.exec(line)?.[1]
    if (term) terms.push(term)
  }
  return terms
}

describe('warmfold bench: table, legend and --json agree', () => {
  it("the legend explains every column, and every term of the coding workload's Fold audit lines", async () => {
    const table = await tableOutput()
    expect(table.code).toBe(0)
    const lines = table.stdout.split('\n')
    const header = lines[2]!
    const columns = header
      .trim()
      .split(/ {2,}/)
      .map((title) => title.replace(/ \(each (call|fold)\)$/, ''))
    expect(legendTerms(table.stdout, 'Columns (')).toEqual(
      columns.filter((title) => !['window', 'strategy'].includes(title)),
    )
    const audits = lines.filter((line) => /^ {2}8,000 (warmfold|legacy): /.test(line))
    expect(audits).toHaveLength(2)
    const terms = legendTerms(table.stdout, 'Fold audit (over all')
    expect(terms).toEqual(['paths', 'commands', 'errors', 'summary alone', 'trail', 'audit vs simulator'])
    for (const line of audits) {
      // Every term the line uses is one the legend explains.
      expect(line).toMatch(/paths [\d.]+% \(summary alone [\d.]+%\), commands [\d.]+% \(summary alone [\d.]+%\)/)
      expect(line).toMatch(/; (trail ≤ [\d,]+ of [\d,]+ tokens|no trail); audit vs simulator: precision [\d.]+, recall/)
    }
    // A reading run has no Fold audit block, and no audit terms in its legend.
    const reading = await cli(['bench', '--windows', '8000', '--steps', '4', '--strategies', 'warmfold'])
    expect(reading.stdout).not.toContain('Fold audit')
  })

  it("--json names the prefilled tokens as the table does: sessionPrefilledTokens and each call's prefilledTokens", async () => {
    const table = (await tableOutput()).stdout.split('\n')
    const report = JSON.parse((await cli([...RUN, '--json'])).stdout) as BenchReport
    const number = new Intl.NumberFormat('en-US')
    for (const run of report.runs) {
      const row = table.find((line) => new RegExp(`^ ?${number.format(run.window)}  ${run.strategy} `).test(line))!
      const cells = row.trim().split(/ {2,}/)
      expect(cells[3]).toBe(run.summaryCalls.map((call) => number.format(call.prefilledTokens)).join(' / ') || '-')
      expect(cells[7]).toBe(number.format(run.sessionPrefilledTokens))
      // The schema-1 names stay, with the same numbers.
      expect(run.sessionUncachedTokens).toBe(run.sessionPrefilledTokens)
      for (const call of run.summaryCalls) expect(call.uncachedTokens).toBe(call.prefilledTokens)
    }
  })
})
