import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { describe, expect, it } from 'vitest'

// Each package README's config table against the schema its plugin parses the config with: every
// key in a row, no row for a key the schema does not have, no key twice, and where the schema
// holds a plain default (a number, string or boolean), the row's default is that value.

const root = join(import.meta.dirname, '../..')

/** A plugin whose README documents its `Config`: the package folder, the export, the table's heading. */
interface Documented {
  readonly folder: string
  readonly plugin: string
  readonly heading: string
  /** Keys the table documents that the schema leaves out on purpose, with why. */
  readonly beyondSchema?: Readonly<Record<string, string>>
}

const DOCUMENTED: readonly Documented[] = [
  { folder: 'packages/compaction/compaction-basic', plugin: 'BasicCompactionEngine', heading: '## Config' },
  { folder: 'packages/compaction/compaction-tool-result-pruner', plugin: 'ToolResultPruner', heading: '## Config' },
  { folder: 'packages/core/cache-ledger', plugin: 'CacheLedger', heading: '## Config' },
  { folder: 'packages/core/session', plugin: 'SessionStore', heading: '## Config' },
  { folder: 'packages/core/token-meter', plugin: 'TokenMeter', heading: '## Config' },
  {
    folder: 'packages/llm/llm-ai-sdk',
    plugin: 'AiSdkAdapter',
    heading: '## Config',
    beyondSchema: { models: 'live model objects, checked by hand: the schema describes the JSON-shaped keys only' },
  },
  { folder: 'packages/llm/llm-anthropic', plugin: 'AnthropicAdapter', heading: '## Config' },
  { folder: 'packages/llm/llm-google', plugin: 'GoogleAdapter', heading: '## Config' },
  { folder: 'packages/llm/llm-openai-compatible', plugin: 'OpenAICompatibleAdapter', heading: '## Config' },
  { folder: 'packages/llm/llm-openai-responses', plugin: 'OpenAIResponsesAdapter', heading: '## Config' },
  { folder: 'packages/bridges/proxy', plugin: 'WarmfoldProxy', heading: '## Config' },
  {
    folder: 'packages/testing/prefix-cache-testkit',
    plugin: 'PrefixCacheService',
    heading: '## Config (`PrefixCacheService`)',
  },
]

/** The rows of the first table under `heading`: the keys of its first column and its default cell. */
function configRows(readme: string, heading: string): Array<{ keys: string[]; defaults: string }> {
  const lines = readme.split('\n')
  let index = lines.indexOf(heading)
  if (index < 0) throw new Error(`no ${JSON.stringify(heading)} heading`)
  while (!lines[index]!.startsWith('|')) index++
  const rows: Array<{ keys: string[]; defaults: string }> = []
  for (index += 2; lines[index]?.startsWith('|'); index++) {
    const [, keyCell = '', defaultCell = ''] = lines[index]!.split(/(?<!\\)\|/)
    const keys = [...keyCell.matchAll(/`([^`]+)`/g)].map((match) => match[1]!).filter((key) => !key.includes('.'))
    rows.push({ keys, defaults: defaultCell.trim() })
  }
  return rows
}

/** `'warn'`, `"warn"` and `warn` are one default; numbers and booleans as written. */
const literal = (text: string) => text.replace(/^'(.*)'$/, '$1').replace(/^"(.*)"$/, '$1')

describe('README config tables match the config schemas', () => {
  it.each(DOCUMENTED.map((entry) => [entry.plugin, entry] as const))('%s', async (_, entry) => {
    const module = (await import(pathToFileURL(join(root, entry.folder, 'src/index.ts')).href)) as Record<
      string,
      { Config: { schema: { dict: Record<string, { meta?: { default?: unknown } }> } } }
    >
    const dict = module[entry.plugin]!.Config.schema.dict
    const schemaKeys = Object.keys(dict)
    const rows = configRows(readFileSync(join(root, entry.folder, 'README.md'), 'utf8'), entry.heading)
    const documented = rows.flatMap((row) => row.keys)
    const beyond = Object.keys(entry.beyondSchema ?? {})
    expect(
      documented.filter((key, index) => documented.indexOf(key) !== index),
      'keys in two rows',
    ).toEqual([])
    expect(
      schemaKeys.filter((key) => !documented.includes(key)),
      'schema keys without a row',
    ).toEqual([])
    expect(
      documented.filter((key) => !schemaKeys.includes(key) && !beyond.includes(key)),
      'rows for keys the schema does not have',
    ).toEqual([])
    for (const row of rows) {
      // `2` / `500` for a row of two keys: one default each, in order.
      const cells = row.defaults.split(' / ')
      row.keys.forEach((key, index) => {
        const value = dict[key]?.meta?.default
        if (!['number', 'string', 'boolean'].includes(typeof value)) return
        const cell = cells.length === row.keys.length ? cells[index]! : row.defaults
        const written = /^`([^`]+)`/.exec(cell)?.[1]
        expect(written === undefined ? cell : literal(written), `the default of ${key}`).toBe(String(value))
      })
    }
  })
})

describe('README retry texts match the code', () => {
  it('no adapter README promises jitter: the shared retry waits retryBaseMs × 2^n exactly, so runs are reproducible', () => {
    const retry = readFileSync(join(root, 'packages/llm/llm/src/retry-stream.ts'), 'utf8')
    expect(retry).toContain('No jitter, so runs are reproducible')
    for (const folder of [
      'llm/llm',
      'llm/llm-openai-compatible',
      'llm/llm-anthropic',
      'llm/llm-google',
      'llm/llm-openai-responses',
      'llm/llm-ai-sdk',
    ]) {
      const readme = readFileSync(join(root, 'packages', folder, 'README.md'), 'utf8')
      expect(readme.match(/[^.]*\d+\s*%\s*jitter[^.]*/g) ?? [], folder).toEqual([])
    }
  })
})

/** `0.098` as `9.8 %`. */
const percent = (rate: number) => `${Number((rate * 100).toFixed(1))} %`

describe("warmfold bench's legend matches the test kit", () => {
  it("the Fold audit legend quotes the coding workload's lossy summarizer's retention rates", async () => {
    const { LOSSY_RETENTION } = (await import(
      pathToFileURL(join(root, 'packages/testing/prefix-cache-testkit/src/lossy-summary.ts')).href
    )) as { LOSSY_RETENTION: Record<'path' | 'command' | 'error', number> }
    const { AUDIT_LEGEND } = (await import(
      pathToFileURL(join(root, 'packages/cli/src/bench/bench-legend.ts')).href
    )) as {
      AUDIT_LEGEND: ReadonlyArray<readonly [string, string]>
    }
    const text = AUDIT_LEGEND.find(([term]) => term === 'summary alone')![1]
    expect(text).toContain(
      `it keeps a path ${percent(LOSSY_RETENTION.path)} of the time, a command ${percent(LOSSY_RETENTION.command)}, ` +
        `an error ${percent(LOSSY_RETENTION.error)}`,
    )
  })
})
