import { COMPACTION_INSTRUCTION } from '@warmfold/compaction-basic'
import { describe, expect, it } from 'vitest'
import { COMPARISON_STEPS, runHost } from '../bench/comparison.ts'

describe('warmfoldMiddleware against the prefix-cache simulator', () => {
  it('a 60-step AI SDK host at 32k: every summary call prefills only the instruction, and the run finishes within the window', async () => {
    const run = await runHost('warmfold', 32_000)
    expect(run.completed).toBe(true)
    expect(run.largestPrompt).toBeLessThanOrEqual(32_000)
    expect(run.summaryPrefilled.length).toBeGreaterThanOrEqual(3)
    // The instruction as the simulator renders it (its JSON, 4 characters per token), and no more.
    const instruction = COMPACTION_INSTRUCTION.length / 4
    for (const prefilled of run.summaryPrefilled) {
      expect(prefilled).toBeGreaterThanOrEqual(Math.floor(instruction))
      expect(prefilled).toBeLessThan(instruction + 25)
    }
    expect(run.lastSummarized).toBe(true)
    expect(run.lastToolResults).toBeLessThan(COMPARISON_STEPS)
    // A 60-step session through real HTTP: generous for a loaded 2-core machine.
  }, 60_000)
})
