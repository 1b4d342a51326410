import type { CommandRuns } from './command-runs.ts'
import { ENGINE_FIGURES, pruneTable } from './engine-figures.ts'
import type { Generator } from './figure-kit.ts'
import { summaryPrefilled } from './figure-kit.ts'
import type { Mark } from './markers.ts'
import { PEER_FIGURES } from './peer-figures.ts'
import { backgroundRatios, TIME_FIGURES, timeTable } from './time-figures.ts'

/** Blocks made by code (markdown tables from several runs), by the name their mark gives. */
export const TABLES: Readonly<Record<string, Generator>> = {
  'time-table': timeTable,
  'engine.prune-table': pruneTable,
}

/** The named figures and tables a README's marks may use. */
export interface Registry {
  readonly figures: Readonly<Record<string, Generator>>
  readonly tables: Readonly<Record<string, Generator>>
}

/** Figures, by the name their mark gives. */
export const FIGURES: Readonly<Record<string, Generator>> = {
  ...TIME_FIGURES,
  ...PEER_FIGURES,
  ...ENGINE_FIGURES,
  'engine.background-ratios': backgroundRatios,
  'bench.instruction': async (runs) =>
    String(Math.min(...summaryPrefilled((await runs.bench('')).runs.filter((run) => run.strategy === 'warmfold')))),
}

/**
 * What a command's output becomes in a block, after `|`: `table` keeps the title and the table
 * (the legend under it is left out), `rows` only the table's header, rule and rows.
 */
const FILTERS: Readonly<Record<string, (stdout: string) => string>> = {
  table: (stdout) => {
    const lines = stdout.split('\n')
    const legend = lines.findIndex((line) => line.startsWith('Columns (') || line.startsWith('Fold audit ('))
    return trimEnd(lines.slice(0, legend < 0 ? undefined : legend))
  },
  rows: (stdout) => {
    const lines = stdout.split('\n')
    const rule = lines.findIndex((line) => /^-+( +-+)+$/.test(line))
    if (rule < 1) throw new Error('the output has no table')
    const end = lines.findIndex((line, index) => index > rule && line.trim() === '')
    return trimEnd(lines.slice(rule - 1, end < 0 ? undefined : end))
  },
}

function trimEnd(lines: string[]): string {
  const kept = [...lines]
  while (kept.length && kept.at(-1)!.trim() === '') kept.pop()
  return kept.join('\n')
}

/**
 * The text `mark` must hold: a block's command output (through its filters) or table, a figure's value.
 * @throws Error naming the file and line for a mark whose name is unknown or whose filter is;
 *   ClaimError (figure-kit.ts) when the sentence around a figure no longer holds.
 */
export async function generate(
  mark: Mark,
  file: string,
  runs: CommandRuns,
  registry: Registry = { figures: FIGURES, tables: TABLES },
): Promise<string> {
  if (mark.kind === 'figure') {
    const figure = registry.figures[mark.spec]
    if (!figure)
      throw new Error(
        `${file}:${mark.line}: no figure named ${JSON.stringify(mark.spec)} (scripts/readme-numbers/registry.ts)`,
      )
    return figure(runs)
  }
  if (!mark.spec.startsWith('warmfold ')) {
    const table = registry.tables[mark.spec]
    if (!table)
      throw new Error(
        `${file}:${mark.line}: no table named ${JSON.stringify(mark.spec)} (scripts/readme-numbers/registry.ts)`,
      )
    return table(runs)
  }
  const [command, ...filters] = mark.spec.split(' | ').map((part) => part.trim())
  let text = (await runs.output(command!)).stdout
  for (const name of filters) {
    const filter = FILTERS[name]
    if (!filter)
      throw new Error(
        `${file}:${mark.line}: no output filter ${JSON.stringify(name)}; filters: ${Object.keys(FILTERS).join(', ')}`,
      )
    text = filter(text)
  }
  return text.replace(/\n+$/, '')
}
