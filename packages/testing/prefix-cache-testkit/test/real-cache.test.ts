import { COMPACTION_INSTRUCTION } from '@warmfold/compaction-basic'
import { describe, expect, it } from 'vitest'
import { runProbedWorkload } from '../src/index.ts'
import { shortfalls, SLACK, useLlamaCacheServer, userMessageTokens, WINDOW } from './real-cache-fixture.ts'

// The default run's real-cache case: one warmfold run just long enough for one fold, checked
// against a real llama.cpp KV cache, and a short negative control. The full proof (two folds,
// `legacy` at both efforts, overflow recovery) is `real-cache-proof.test.ts`, run by
// `pnpm test:real-cache` and CI.

/** The fewest steps after which the workload folds once at {@link WINDOW}. */
const STEPS = 16

const { probe } = useLlamaCacheServer()

describe('a real KV cache (llama.cpp) confirms the cache rules on one fold', () => {
  it('conversation requests evaluate only what they appended, and the summary call only the instruction', async () => {
    const instructionTokens = await userMessageTokens(probe(), COMPACTION_INSTRUCTION)
    const run = await runProbedWorkload({ window: WINDOW, steps: STEPS, strategy: 'warmfold', effort: 'max' }, probe())
    expect(run.completed).toBe(true)
    expect(shortfalls(run, true)).toEqual([])
    expect(run.summaryCalls).toHaveLength(1)
    for (const call of run.summaryCalls) {
      expect(call.uncachedTokens).toBeLessThanOrEqual(instructionTokens + SLACK)
      expect(call.cachedTokens).toBeGreaterThan(call.promptTokens / 2)
    }
    for (const record of run.probeRecords) expect(record.uncachedTokens).toBe(record.promptTokens - record.cachedTokens)
  }, 120_000)

  it('negative control: a timestamp at the top of the system prompt destroys reuse, so the check above can fail', async () => {
    let clock = 0
    const run = await runProbedWorkload({ window: WINDOW, steps: 1, strategy: 'warmfold' }, probe(), {
      configure(ctx) {
        ctx.on('agent/request', (context) => {
          context.header = {
            ...context.header,
            system: `Current time: 2026-11-29T23:${String(clock++).padStart(2, '0')}:00Z\n${context.header.system ?? ''}`,
          }
        })
      },
    })
    const broken = shortfalls(run, false)
    expect(run.conversation).toHaveLength(2)
    expect(broken.length).toBe(run.conversation.length - 1)
    for (const observation of broken) expect(observation.cachedTokens).toBeLessThan(64)
  }, 120_000)
})
