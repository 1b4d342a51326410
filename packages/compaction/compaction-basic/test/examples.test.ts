import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { COMPACTION_EVENT_TYPES } from '@warmfold/compaction'
import { SessionStore } from '@warmfold/session'
import { createTestContext, recordCordisPrints } from '@warmfold/test-utils'
import { afterEach, describe, expect, it } from 'vitest'
import { main as foldSurvival } from '../examples/fold-survival.ts'
import { main as summaryBudget } from '../examples/summary-budget.ts'
import { main as usage } from '../examples/usage.ts'

// The README shows this file verbatim (checked by test-utils' readme-examples test).
describe('README examples run', () => {
  const folders: string[] = []
  afterEach(async () => {
    for (const folder of folders.splice(0)) await rm(folder, { recursive: true, force: true })
  })

  it('usage: the mounted host compacts by itself under pressure, then manually; the file store holds every bracket', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'warmfold-basic-example-'))
    folders.push(directory)
    const { result, printed } = await recordCordisPrints(() => usage(directory))
    expect(printed).toEqual([])
    expect(result.lastError).toBeUndefined()
    expect(result.automatic).toBeGreaterThanOrEqual(1)
    expect(result.manual).not.toBeNull()

    const test = await createTestContext()
    try {
      test.ctx.plugin(SessionStore, { store: 'file', directory })
      const session = await test.ctx.sessions.open('s1')
      const types = session.events
        .map((event) => event.type)
        .filter((type) => (COMPACTION_EVENT_TYPES as readonly string[]).includes(type))
      const brackets = types.filter((type) => type === 'compaction/start').length
      const ends = session.events.filter((event) => event.type === 'compaction/end')
      expect(ends).toHaveLength(brackets)
      // A background fold still in flight when the manual compaction starts is discarded first,
      // with its reason and calls on the log; every other bracket committed.
      const failed = ends.filter((event) => 'error' in event.data)
      for (const end of failed)
        expect(end.data).toMatchObject({ discarded: { reason: 'superseded' }, timing: { mode: 'background' } })
      expect(brackets).toBe(result.automatic + 1 + failed.length)
      expect(session.eventAt(result.manual!.endSeq)).toMatchObject({
        type: 'compaction/end',
        data: { compactionId: result.manual!.compactionId },
      })
      expect(session.events.at(-1)?.type).toBe('compaction/end')
      test.assertClean()
    } finally {
      await test.dispose()
    }
  })

  it('summary-budget: a summary spent on reasoning is retried with larger caps on the same prompt until it fits', async () => {
    const { result, printed } = await recordCordisPrints(() => summaryBudget())
    expect(printed).toEqual([])
    expect(
      result?.map((attempt) => [attempt.reason, attempt.reasoningEffort, attempt.maxTokens, attempt.finishReason]),
    ).toEqual([
      ['first', 'max', 1024, 'max-tokens'],
      ['larger-cap', 'max', 2048, 'max-tokens'],
      ['larger-cap', 'max', 4096, 'stop'],
    ])
  })

  it('fold-survival: the pinned rules and the kept questions come through the fold verbatim, and the re-read rules land in its commit', async () => {
    const { result, printed } = await recordCordisPrints(() => foldSurvival(async () => 'Use pnpm.'))
    expect(printed).toEqual([])
    expect(result[0]).toContain('Goal: explain the loader.')
    expect(result.slice(1, 4)).toEqual(
      ['Project rules:\nUse pnpm.', 'How does the loader start?', 'And the plugins?'].slice(0, 3),
    )
    expect(result.at(-1)).toBe('Rules, re-read:\nUse pnpm.')
  })
})
