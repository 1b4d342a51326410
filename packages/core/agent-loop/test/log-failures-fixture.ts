import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, expect } from 'vitest'
import type { LoopHarness } from './loop-fixture.ts'
import { mountLoop } from './loop-fixture.ts'

/**
 * Each test of a file that calls this gets a fresh log directory and its loops disposed after it,
 * and fails if any rejection went unhandled while it ran.
 */
export function useLogFailureLoops(): {
  directory: () => string
  fileLoop: (responses: Parameters<typeof mountLoop>[0]) => Promise<LoopHarness>
} {
  let directory = ''
  const harnesses: LoopHarness[] = []
  const unhandled: unknown[] = []
  const onUnhandled = (reason: unknown) => void unhandled.push(reason)
  beforeEach(async () => {
    directory = await mkdtemp(join(tmpdir(), 'warmfold-log-failures-'))
    unhandled.length = 0
    process.on('unhandledRejection', onUnhandled)
  })
  afterEach(async () => {
    for (const harness of harnesses.splice(0)) await harness.dispose()
    // One macrotask lets a rejection nobody handled reach the listener before it is removed.
    await new Promise((resolve) => setImmediate(resolve))
    process.off('unhandledRejection', onUnhandled)
    await rm(directory, { recursive: true, force: true })
    expect(unhandled).toEqual([])
  })
  return {
    directory: () => directory,
    fileLoop: async (responses) => {
      const harness = await mountLoop(responses, { store: 'file', directory })
      harnesses.push(harness)
      return harness
    },
  }
}
