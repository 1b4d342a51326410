import { readFileSync } from 'node:fs'
import { recordCordisPrints } from '@warmfold/test-utils'
import { describe, expect, it } from 'vitest'
import { main as latency } from '../examples/latency.ts'
import { main as realCache } from '../examples/real-cache.ts'
import { main as service } from '../examples/service.ts'
import { main as simulator } from '../examples/simulator.ts'
import { main as workload } from '../examples/workload.ts'

// The README shows these files verbatim (checked by test-utils' readme-examples test).
describe('README examples run', () => {
  it('simulator: a first request is cold, its exact repeat is fully cached', () => {
    const result = simulator()
    expect(result.first).toBe(0)
    expect(result.promptChars).toBeGreaterThan(4)
    expect(result.again).toBe(Math.floor(result.promptChars / 4))
    expect(result.divergence).toEqual({ part: 'none' })
  })

  it('latency: a fold over a cached prefix against the same fold prefilled, under a JSON profile and sonnet-class', () => {
    const result = latency()
    // latency-profile.json: 400 ms + 400 / 8,000 s + 150,000 / 120,000 s + 3,000 / 60 s; cold: 400 ms + 150,400 / 8,000 s + 50 s.
    expect(result.mine.warm).toEqual({ firstTokenMs: 400 + 50 + 1250, decodeMs: 50_000, totalMs: 51_700 })
    expect(result.mine.cold).toEqual({ firstTokenMs: 400 + 18_800, decodeMs: 50_000, totalMs: 69_200 })
    expect(result.sonnet.warm.totalMs).toBeCloseTo(1000 + 8 + 300 + 37_500, 6)
    expect(result.sonnet.cold.totalMs).toBeCloseTo(1000 + 3008 + 37_500, 6)
  })

  it('latency: the README shows examples/latency-profile.json as it is', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8')
    const file = readFileSync(new URL('../examples/latency-profile.json', import.meta.url), 'utf8')
    const block = /`examples\/latency-profile\.json`:\n\n```json\n([\s\S]*?)```/.exec(readme)
    expect(block?.[1]).toBe(file)
  })

  it('service: observes every request an agent sends; each extends the previous one', async () => {
    const { result, printed } = await recordCordisPrints(service)
    expect(printed).toEqual([])
    expect(result.totals.requests).toBe(2)
    expect(result.observations).toEqual([
      { cachedTokens: 0, extendsPrevious: false },
      { cachedTokens: expect.any(Number), extendsPrevious: true },
    ])
    expect(result.observations[1]!.cachedTokens).toBeGreaterThan(0)
  })

  it('workload: warm summary calls, no silent rewrite, a completed run', async () => {
    const result = await workload()
    expect(result.completed).toBe(true)
    expect(result.silentRewrites).toBe(0)
    expect(result.hitRatios.length).toBeGreaterThan(0)
    for (const ratio of result.hitRatios) expect(ratio).toBeGreaterThan(0.9)
  })

  // One step keeps it short (the full run's folds are real-cache.test.ts's job): every
  // conversation request after the first reads the previous one back from the real KV cache.
  it(
    'real cache: a short probed run against llama.cpp, each request reusing the previous prompt',
    { timeout: 120_000 },
    async () => {
      const result = await realCache(1)
      expect(result.completed).toBe(true)
      expect(result.summaryCalls).toEqual([])
      expect(result.conversation).toHaveLength(2)
      expect(result.simulated).toHaveLength(2)
      expect(result.conversation[0]!.cachedTokens).toBe(0)
      for (const request of result.conversation.slice(1))
        expect(request.cachedTokens).toBeGreaterThan(request.uncachedTokens)
    },
  )
})
