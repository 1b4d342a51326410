import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ARTIFACT_CLASSES } from '../src/index.ts'
import { HELD_OUT_FOLDER, loadCorpus, parseSample } from './corpus-sample.ts'
import { precision, recall, renderScoreTable, scoreCorpus } from './corpus-score.ts'

const README = join(import.meta.dirname, '..', 'README.md')
const START = '<!-- corpus-scores -->'
const END = '<!-- /corpus-scores -->'
const HELD_OUT_START = '<!-- held-out-scores -->'
const HELD_OUT_END = '<!-- /held-out-scores -->'

describe('extraction against the hand-labelled corpus', () => {
  const samples = loadCorpus()
  const { scores, differences } = scoreCorpus(samples)

  it('has realistic samples of every kind the issue names, labelled in every class', () => {
    expect(samples.length).toBeGreaterThanOrEqual(40)
    for (const artifactClass of ARTIFACT_CLASSES)
      expect(scores[artifactClass].labelled, artifactClass).toBeGreaterThan(0)
  })

  it.each(['path', 'command', 'error'] as const)('%s: precision >= 0.95 and recall >= 0.9', (artifactClass) => {
    const score = scores[artifactClass]
    const misses = differences.filter((difference) => difference.class === artifactClass)
    expect(precision(score), JSON.stringify(misses, null, 1)).toBeGreaterThanOrEqual(0.95)
    expect(recall(score), JSON.stringify(misses, null, 1)).toBeGreaterThanOrEqual(0.9)
  })

  it('the README shows the measured table (FOLD_AUDIT_WRITE_README=1 rewrites it)', () => {
    const readme = readFileSync(README, 'utf8')
    const start = readme.indexOf(START)
    const end = readme.indexOf(END)
    expect(start, `README.md has a ${START} … ${END} section`).toBeGreaterThanOrEqual(0)
    expect(end).toBeGreaterThan(start)
    const table = renderScoreTable(scores, samples.length)
    if (process.env.FOLD_AUDIT_WRITE_README === '1') {
      writeFileSync(README, `${readme.slice(0, start + START.length)}\n${table}\n${readme.slice(end)}`)
      return
    }
    expect(
      readme.slice(start + START.length, end).trim(),
      'the README table differs from the measured one: run the test with FOLD_AUDIT_WRITE_README=1',
    ).toBe(table)
  })
})

describe('extraction against the held-out samples', () => {
  // Labelled before the extractor ever ran on them, and never tuned to: the README reports their
  // score as measured, beside the development corpus's, with no threshold here (a threshold
  // would invite tuning to them).
  const samples = loadCorpus(HELD_OUT_FOLDER)
  const { scores } = scoreCorpus(samples)

  it('has at least 20 samples, none of them a copy of a development sample', () => {
    expect(samples.length).toBeGreaterThanOrEqual(20)
    const development = new Set(loadCorpus().map((sample) => sample.name))
    for (const sample of samples) expect(development.has(sample.name), sample.name).toBe(false)
  })

  it('the README shows the measured held-out table (FOLD_AUDIT_WRITE_README=1 rewrites it)', () => {
    const readme = readFileSync(README, 'utf8')
    const start = readme.indexOf(HELD_OUT_START)
    const end = readme.indexOf(HELD_OUT_END)
    expect(start, `README.md has a ${HELD_OUT_START} … ${HELD_OUT_END} section`).toBeGreaterThanOrEqual(0)
    expect(end).toBeGreaterThan(start)
    const table = renderScoreTable(scores, samples.length, 'test/held-out')
    if (process.env.FOLD_AUDIT_WRITE_README === '1') {
      writeFileSync(README, `${readme.slice(0, start + HELD_OUT_START.length)}\n${table}\n${readme.slice(end)}`)
      return
    }
    expect(
      readme.slice(start + HELD_OUT_START.length, end).trim(),
      'the README held-out table differs from the measured one: run the test with FOLD_AUDIT_WRITE_README=1',
    ).toBe(table)
  })
})

describe('the corpus format', () => {
  it('builds one message per section in order, calls and results paired, expected items by class', () => {
    const sample = parseSample(
      'x.sample',
      '%%% user\nhello there\n%%% call bash\n{"command": "ls"}\n%%% result error\nboom\n\n%%% expected command\nls\n%%% note\nfree text\n',
    )
    expect(sample.messages.map(({ seq, message }) => [seq, message.role, message.source.kind])).toEqual([
      [0, 'user', 'user'],
      [1, 'assistant', 'model'],
      [2, 'user', 'tool'],
    ])
    expect(sample.messages[2]!.message.content).toEqual([
      { type: 'tool-result', toolCallId: 'call-1', content: [{ type: 'text', text: 'boom' }], isError: true },
    ])
    expect(sample.expected.command).toEqual(['ls'])
    expect(sample.expected.path).toEqual([])
  })

  it('refuses what it does not understand, naming the file and line', () => {
    expect(() => parseSample('a.sample', 'stray\n')).toThrow('a.sample:1: text before the first %%% section')
    expect(() => parseSample('b.sample', '%%% expected colour\nred\n')).toThrow('b.sample:1: unknown class "colour"')
    expect(() => parseSample('c.sample', '%%% result\nx\n')).toThrow('c.sample:1: a result without a call before it')
    expect(() => parseSample('d.sample', '%%% expected path\na.ts\na.ts\n')).toThrow(
      'd.sample:1: a path item is listed twice',
    )
  })
})
