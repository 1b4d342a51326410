import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { formatterWidth, MAX_FILE_LINES, sourceShapeProblems } from '../check-source-shape.ts'

const root = resolve(import.meta.dirname, '../..')
const scratch: string[] = []
afterEach(() => {
  for (const folder of scratch.splice(0)) rmSync(folder, { recursive: true, force: true })
})

describe('source shape', () => {
  it('no file under a package src/ is over 300 lines, and no line there is over the formatter width', () => {
    expect(formatterWidth(root)).toBe(120)
    expect(sourceShapeProblems(root)).toEqual([])
  })

  it('names a long file and a wide line, and leaves tests and benches alone', () => {
    const fake = mkdtempSync(join(tmpdir(), 'warmfold-shape-'))
    scratch.push(fake)
    mkdirSync(join(fake, 'packages/core/x/src/deep'), { recursive: true })
    mkdirSync(join(fake, 'packages/core/x/test'), { recursive: true })
    writeFileSync(join(fake, 'packages/core/x/src/deep/long.ts'), 'const a = 1\n'.repeat(MAX_FILE_LINES + 1))
    writeFileSync(join(fake, 'packages/core/x/src/wide.ts'), `// ${'x'.repeat(20)}\nconst b = 2\n`)
    writeFileSync(join(fake, 'packages/core/x/src/fits.ts'), 'const c = 3\n'.repeat(MAX_FILE_LINES))
    writeFileSync(join(fake, 'packages/core/x/test/long.test.ts'), `// ${'y'.repeat(400)}\n`.repeat(400))
    expect(sourceShapeProblems(fake, 20)).toEqual([
      `packages/core/x/src/deep/long.ts: ${MAX_FILE_LINES + 1} lines (at most ${MAX_FILE_LINES})`,
      'packages/core/x/src/wide.ts:1: 23 characters (at most 20)',
    ])
  })
})
