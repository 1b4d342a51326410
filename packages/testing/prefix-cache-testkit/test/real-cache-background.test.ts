import { COMPACTION_INSTRUCTION } from '@warmfold/compaction-basic'
import type { GenerateOptions } from '@warmfold/llm'
import { describe, expect, it } from 'vitest'
import { runProbedWorkload } from '../src/index.ts'
import { SLACK, useLlamaCacheServer, userMessageTokens, WINDOW } from './real-cache-fixture.ts'

// A background fold against a real llama.cpp KV cache (heavy set): the conversation goes on while
// the summary call is in flight, and the summary call reads the snapshot's whole prompt from the
// real cache. Asserted on the session's events and the server's cache counts, never on times
// (the wall-clock wait at the threshold is `bench/background-wait.bench.ts`).

/** The fewest steps after which the workload's first background fold lands at {@link WINDOW}. */
const STEPS = 16

const { probe } = useLlamaCacheServer()

function sameMessages(a: GenerateOptions['messages'], b: GenerateOptions['messages']): boolean {
  return a.length === b.length && a.every((message, index) => JSON.stringify(message) === JSON.stringify(b[index]))
}

describe('a real KV cache (llama.cpp) and a background fold', () => {
  it('a conversation request is sent and answered while the summary call is in flight, and the summary call reads the snapshot from the cache', async () => {
    const instructionTokens = await userMessageTokens(probe(), COMPACTION_INSTRUCTION)
    const run = await runProbedWorkload(
      { window: WINDOW, steps: STEPS, strategy: 'warmfold', effort: 'max', backgroundFold: true },
      probe(),
    )
    expect(run.completed).toBe(true)
    const events = run.session.events
    const start = events.find((event) => event.type === 'compaction/start')
    expect(start?.data).toMatchObject({ trigger: 'background' })
    const compactionId = (start?.data as { compactionId?: string } | undefined)?.compactionId
    // The summary call's end: its `cache/observation`, logged when its answer finished.
    const summaryEnd = events.find(
      (event) =>
        event.seq > (start?.seq ?? 0) &&
        event.type === 'cache/observation' &&
        (event.data as { purpose: string }).purpose === 'compaction',
    )
    expect(summaryEnd).toBeDefined()
    const between = events.filter((event) => event.seq > (start?.seq ?? 0) && event.seq < (summaryEnd?.seq ?? 0))
    expect(
      between.filter(
        (event) => event.type === 'cache/observation' && (event.data as { purpose: string }).purpose === 'conversation',
      ).length,
    ).toBeGreaterThan(0)
    expect(between.filter((event) => event.type === 'assistant/message').length).toBeGreaterThan(0)
    // It landed as a background fold.
    const summary = events.find((event) => event.type === 'compaction/summary')
    expect(summary?.data).toMatchObject({ compactionId })
    expect(events.find((event) => event.type === 'compaction/end')?.data).toMatchObject({
      compactionId,
      timing: { mode: 'background' },
    })
    expect(events.find((event) => event.type === 'compaction/end')?.data).not.toHaveProperty('error')

    // The summary call replays the snapshot (the last answered conversation request) whole, then the instruction.
    const index = run.requests.findIndex((request) => request.purpose === 'compaction')
    const snapshot = run.requests.slice(0, index).findLastIndex((request) => request.purpose === 'conversation')
    const call = run.requests[index] as GenerateOptions
    expect(sameMessages(call.messages.slice(0, -1), (run.requests[snapshot] as GenerateOptions).messages)).toBe(true)
    // The server's counts: the summary call's cached tokens cover the snapshot's whole prompt; it evaluates only the instruction.
    const measured = run.probeRecords[index]
    const snapshotPrompt = run.probeRecords[snapshot]?.promptTokens ?? Number.POSITIVE_INFINITY
    expect(measured?.cachedTokens).toBeGreaterThanOrEqual(snapshotPrompt - SLACK)
    expect(measured?.uncachedTokens).toBeLessThanOrEqual(instructionTokens + SLACK)
    // The conversation request answered meanwhile was sent after the summary call started.
    expect(
      run.requests
        .slice(index + 1)
        .some(
          (request, offset) =>
            request.purpose === 'conversation' && (run.sentAtSeq[index + 1 + offset] ?? 0) < (summaryEnd?.seq ?? 0),
        ),
    ).toBe(true)
  }, 180_000)
})
