import { performance } from 'node:perf_hooks'
import type { GenerateOptions } from '@warmfold/llm'
import type { AnySessionEvent, Session } from '@warmfold/session'
import { afterAll, bench, describe } from 'vitest'
import { runProbedWorkload } from '../src/index.ts'
import { useLlamaCacheServer, WINDOW } from '../test/real-cache-fixture.ts'

// The wall-clock wait at the pressure threshold on a real llama.cpp KV cache (node-llama-cpp,
// tiny generated GGUF, 2 threads), with background folds and with `background: { enabled: false }`.
// Every request is replayed to the real server as the workload sends it (the probe, awaited
// before the request counts as sent), so each measured gap, from a conversation answer to the
// next conversation request, is the engine's work at that boundary plus the real server's prefill
// of the next request: at a fold boundary, the summary call on the turn's path and the cold
// prefill after it (sync), or the swap and that prefill (background; its summary call ran
// earlier, beside the conversation, on the same one-slot server). Content and decode are scripted
// on the virtual clock, so the wall-clock numbers are prefill and cache work only.
// Run: npx -y pnpm@12.4.2 vitest bench --run packages/testing/prefix-cache-testkit/bench/background-wait.bench.ts

/** Enough steps for the first fold of the workload at {@link WINDOW} to land, and a few after it. */
const STEPS = 20

const { probe } = useLlamaCacheServer()

interface Gap {
  /** Wall-clock ms from a conversation answer to the next conversation request. */
  readonly ms: number
  /** A checkpoint landed in the gap (a sync fold, or a background fold's swap). */
  readonly landed: boolean
}

const gaps: Record<'background' | 'sync', Gap[]> = { background: [], sync: [] }

/** Measures every gap between a conversation answer and the next conversation request. */
async function measure(mode: 'background' | 'sync'): Promise<void> {
  let answeredAt: number | undefined
  let landed = false
  await runProbedWorkload(
    { window: WINDOW, steps: STEPS, strategy: 'warmfold', effort: 'max', backgroundFold: mode === 'background' },
    probe(),
    {
      configure(ctx) {
        ctx.on('llm/finish', (request: GenerateOptions) => {
          if (request.purpose === 'conversation') answeredAt = performance.now()
        })
        ctx.on('llm/stream', (request: GenerateOptions) => {
          if (request.purpose !== 'conversation') return
          if (answeredAt !== undefined) gaps[mode].push({ ms: performance.now() - answeredAt, landed })
          answeredAt = undefined
          landed = false
        })
        ctx.on('session/event', (_session: Session, event: AnySessionEvent) => {
          if (event.type === 'compaction/summary') landed = true
        })
      },
    },
  )
}

function percentile(values: readonly number[], share: number): number {
  const sorted = values.toSorted((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(share * sorted.length))] ?? Number.NaN
}

afterAll(() => {
  for (const mode of ['background', 'sync'] as const) {
    const folds = gaps[mode].filter((gap) => gap.landed).map((gap) => gap.ms)
    const plain = gaps[mode].filter((gap) => !gap.landed).map((gap) => gap.ms)
    console.log(
      `${mode}: ${folds.length} fold boundaries, wait there p50 ${percentile(folds, 0.5).toFixed(0)} ms, max ${Math.max(...folds).toFixed(0)} ms; ` +
        `${plain.length} other boundaries p50 ${percentile(plain, 0.5).toFixed(0)} ms, max ${Math.max(...plain).toFixed(0)} ms`,
    )
  }
})

describe(`wait at the threshold on a real llama.cpp cache (window ${WINDOW}, ${STEPS} steps)`, () => {
  bench('background folds', () => measure('background'), { iterations: 3, time: 0, warmupIterations: 0 })
  bench('background: { enabled: false }', () => measure('sync'), { iterations: 3, time: 0, warmupIterations: 0 })
})
