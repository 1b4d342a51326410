import { afterAll, beforeAll, bench, describe } from 'vitest'
import type { LlamaCacheServer } from '../src/index.ts'
import { startLlamaCacheServer } from '../src/index.ts'

/** About 8,000 tokens with the tiny vocabulary (this text runs about 4.2 characters per token). */
const SYSTEM = 'the file is read with this test function and the value is returned. '.repeat(500)
/** About 200 tokens. */
const APPENDED = 'read the file and return the value of this function. '.repeat(16)

let server: LlamaCacheServer
let request = 0
const timings: Array<{ label: string; promptTokens: number; evaluated: number; ms: number }> = []

async function chat(label: string | undefined, body: Record<string, unknown>): Promise<void> {
  const response = await fetch(`${server.baseURL}/chat/completions`, {
    method: 'POST',
    body: JSON.stringify({ ...body, max_tokens: 1 }),
  })
  const completion = (await response.json()) as {
    usage: { prompt_tokens: number }
    timings: { prompt_n: number; prompt_ms: number }
  }
  if (label !== undefined)
    timings.push({
      label,
      promptTokens: completion.usage.prompt_tokens,
      evaluated: completion.timings.prompt_n,
      ms: completion.timings.prompt_ms,
    })
}

beforeAll(async () => {
  server = await startLlamaCacheServer()
})

afterAll(async () => {
  await server.close()
  // The server's own prompt timings, so the numbers exclude HTTP and JSON work.
  for (const label of new Set(timings.map((timing) => timing.label))) {
    const runs = timings.filter((timing) => timing.label === label)
    const tokens = runs.reduce((sum, run) => sum + run.evaluated, 0)
    const ms = runs.reduce((sum, run) => sum + run.ms, 0)
    console.log(
      `${label}: ${runs.length} runs, ${Math.round(tokens / runs.length)} tokens evaluated per run, ${Math.round((tokens * 1000) / ms)} tokens/s`,
    )
  }
})

describe('prefill on 2 threads with flash attention', () => {
  bench(
    'cold: 8k-token prompt, nothing cached',
    async () => {
      // A new first line each time: only BOS and "Reasoning effort: " stay cached.
      await chat('cold 8k', {
        reasoning_effort: `run${request++}`,
        messages: [
          { role: 'system', content: SYSTEM },
          { role: 'user', content: 'Go.' },
        ],
      })
    },
    { iterations: 5, time: 0, warmupIterations: 0, warmupTime: 0 },
  )

  bench(
    'warm: 8k-token prefix cached, about 200 tokens appended',
    async () => {
      const messages = [
        { role: 'system', content: SYSTEM },
        { role: 'user', content: 'Go.' },
      ]
      await chat(undefined, { reasoning_effort: 'high', messages })
      await chat('append 200 to a cached 8k', {
        reasoning_effort: 'high',
        messages: [
          ...messages,
          { role: 'assistant', content: 'ok' },
          { role: 'user', content: `${APPENDED}${request++}` },
        ],
      })
    },
    { iterations: 5, time: 0, warmupIterations: 0, warmupTime: 0 },
  )
})
