import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { readmeFiles, readmeNumbers } from '../readme-numbers.ts'
import { CommandRuns } from '../readme-numbers/command-runs.ts'
import { claim } from '../readme-numbers/figure-kit.ts'
import { blockContent, findMarks, replaceMarks } from '../readme-numbers/markers.ts'
import { FIGURES, TABLES } from '../readme-numbers/registry.ts'

// The mechanism behind `pnpm readme-numbers` (CI runs the whole check: `.ci/run`), on small READMEs
// and one short real bench run.

let root: string
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'warmfold-readme-numbers-test-'))
})
afterEach(() => rm(root, { recursive: true, force: true }))

const SMALL = 'warmfold bench --windows 8000 --steps 2 --strategies warmfold'

describe('the marks of a README', () => {
  it('finds blocks and figures with their line, and keeps a fenced block its fence', () => {
    const text = [
      '# x',
      '<!-- generated: warmfold bench | table -->',
      '```text',
      'old table',
      '```',
      '<!-- /generated -->',
      'It is <!-- figure: peers.cheaper -->13.1 %<!-- /figure --> cheaper.',
      '',
    ].join('\n')
    const marks = findMarks(text, 'README.md')
    expect(marks.map(({ kind, spec, line, content }) => ({ kind, spec, line, content }))).toEqual([
      { kind: 'block', spec: 'warmfold bench | table', line: 2, content: '```text\nold table\n```\n' },
      { kind: 'figure', spec: 'peers.cheaper', line: 7, content: '13.1 %' },
    ])
    expect(blockContent(marks[0]!.content, 'new\ntable')).toBe('```text\nnew\ntable\n```\n')
    expect(blockContent('| a |\n', '| b |')).toBe('| b |\n')
    const next = replaceMarks(text, marks, (mark) => (mark.kind === 'figure' ? '12.9 %' : '```text\nnew\n```\n'))
    expect(next).toContain('```text\nnew\n```\n<!-- /generated -->')
    expect(next).toContain('It is <!-- figure: peers.cheaper -->12.9 %<!-- /figure --> cheaper.')
  })

  it('refuses a mark that is never closed, naming the file and line', () => {
    expect(() => findMarks('a\n<!-- figure: x -->1 %\n', 'README.md')).toThrow(
      'README.md:2: a mark is not closed: a block ends with a line <!-- /generated -->, a figure with <!-- /figure -->',
    )
    expect(() => findMarks('<!-- generated: warmfold bench -->\n```\n```\n', 'a/README.md')).toThrow(
      'a/README.md:1: a mark is not closed',
    )
  })

  it('every registered figure and table has a mark in some README, and every mark names a registered one', async () => {
    const repository = join(import.meta.dirname, '../..')
    const specs = new Set<string>()
    for (const file of await readmeFiles(repository)) {
      const text = await readFile(join(repository, file), 'utf8').catch(() => '')
      for (const mark of findMarks(text, file)) specs.add(mark.spec)
    }
    const named = [...specs].filter((spec) => !spec.startsWith('warmfold '))
    expect(named.filter((spec) => !(spec in FIGURES) && !(spec in TABLES))).toEqual([])
    expect([...Object.keys(FIGURES), ...Object.keys(TABLES)].filter((name) => !specs.has(name))).toEqual([])
  })
})

describe('checking and rewriting', () => {
  it('reports a block whose command prints something else, rewrites it with --write, then finds nothing', async () => {
    await writeFile(
      join(root, 'README.md'),
      `Intro.\n\n<!-- generated: ${SMALL} | rows -->\n\`\`\`\nstale\n\`\`\`\n<!-- /generated -->\n\nEnd.\n`,
    )
    const runs = new CommandRuns()
    const [checked] = await readmeNumbers(root, ['README.md'], { write: false, runs })
    expect(checked!.stale.map(({ line, spec, was }) => ({ line, spec, was }))).toEqual([
      { line: 3, spec: `${SMALL} | rows`, was: '```\nstale\n```\n' },
    ])
    expect(checked!.stale[0]!.now).toMatch(/^```\n *window +strategy +folds .*\n-+ .*\n +8,000 +warmfold .*\n```\n$/)
    expect(await readFile(join(root, 'README.md'), 'utf8')).toContain('stale')
    await readmeNumbers(root, ['README.md'], { write: true, runs })
    const written = await readFile(join(root, 'README.md'), 'utf8')
    expect(written.startsWith('Intro.\n\n<!-- generated: ')).toBe(true)
    expect(written.endsWith('<!-- /generated -->\n\nEnd.\n')).toBe(true)
    const [again] = await readmeNumbers(root, ['README.md'], { write: false, runs })
    expect(again!.stale).toEqual([])
  })

  it('a figure whose sentence no longer holds is reported and left as it is, the others rewritten', async () => {
    const text = 'A <!-- figure: a -->1<!-- /figure --> and <!-- figure: b -->old<!-- /figure -->.\n'
    await writeFile(join(root, 'README.md'), text)
    const registry = {
      tables: {},
      figures: {
        a: async () => {
          claim(false, 'warmfold is no longer cheaper')
          return '2'
        },
        b: async () => 'new',
      },
    }
    const [result] = await readmeNumbers(root, ['README.md'], { write: true, runs: new CommandRuns(), registry })
    expect(result!.claims).toEqual([{ line: 1, spec: 'a', message: 'warmfold is no longer cheaper' }])
    expect(await readFile(join(root, 'README.md'), 'utf8')).toBe(
      'A <!-- figure: a -->1<!-- /figure --> and <!-- figure: b -->new<!-- /figure -->.\n',
    )
  })

  it('runs each command once, however many marks use it', async () => {
    const lines: string[] = []
    const runs = new CommandRuns((line) => lines.push(line))
    const [first, second] = await Promise.all([runs.output(SMALL), runs.output(`${SMALL.replace(' --', '  --')}`)])
    expect(first).toBe(second)
    expect(lines.filter((line) => line.includes('] warmfold bench'))).toEqual([`  [1] ${SMALL}`])
  })
})

describe('marks quoted in code', () => {
  it('are not marks: a README may explain them in inline code or a fenced block', () => {
    const text = [
      'A block after `<!-- generated: warmfold bench … -->` (up to `<!-- /generated -->`), a figure between',
      '`<!-- figure: NAME -->` and `<!-- /figure -->`:',
      '```md',
      'It is <!-- figure: peers.cheaper -->13.1 %<!-- /figure --> cheaper.',
      '```',
      'Real: <!-- figure: peers.cheaper -->13.1 %<!-- /figure -->.',
      '',
    ].join('\n')
    expect(findMarks(text, 'README.md').map(({ spec, line, content }) => ({ spec, line, content }))).toEqual([
      { spec: 'peers.cheaper', line: 6, content: '13.1 %' },
    ])
  })
})
