import { readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { readmeTable, smallWindowRuns, smallWindowTable } from '../small-window-bench.ts'

const root = resolve(import.meta.dirname, '../..')

describe('the small-window bench (root README)', () => {
  it('background folds are never dearer, slower or more numerous than synchronous ones, and the README quotes the table', () => {
    const sessions = smallWindowRuns(root)
    for (const session of sessions) {
      for (const [index, synchronous] of session.synchronous.entries()) {
        const background = session.background[index]!
        const where = `${session.name} at ${background.window}`
        expect(background.costUsd!, `cost, ${where}`).toBeLessThanOrEqual(synchronous.costUsd!)
        expect(background.stall!.totalWaitMs, `wait, ${where}`).toBeLessThanOrEqual(synchronous.stall!.totalWaitMs)
        expect(background.summaryCalls.length, `summary calls, ${where}`).toBeLessThanOrEqual(
          synchronous.summaryCalls.length,
        )
        expect(background.stall!.discardedFolds, `discarded folds, ${where}`).toBe(0)
      }
    }
    expect(readmeTable(readFileSync(join(root, 'README.md'), 'utf8'))).toBe(smallWindowTable(sessions))
  }, 120_000)
})
