import { describe, expect, it } from 'vitest'
import type { PriceProfileName, WorkloadRun, WorkloadStrategy } from '../src/index.ts'
import { costFloor, PRICE_PROFILES, priceRun, requestCost, runWorkload, STRATEGIES } from '../src/index.ts'

const small = { window: 8000, steps: 30 } as const

describe('priceRun', () => {
  it('prices every request of the session from its observation and scripted output', async () => {
    const run = await runWorkload({ ...small, profile: 'anthropic' })
    const price = PRICE_PROFILES['anthropic-5m']
    const priced = priceRun(run, price)
    expect(priced.requests).toHaveLength(run.requests.length)
    priced.requests.forEach((request, index) => {
      const observation = run.cache.observations[index]
      expect(request).toMatchObject({
        index,
        purpose: observation?.purpose,
        promptTokens: observation?.promptTokens,
        cachedTokens: observation?.cachedTokens,
        cacheWriteTokens: observation?.cacheWriteTokens,
        uncachedTokens: observation?.uncachedTokens,
        outputTokens: run.outputTokens[index],
        divergence: observation?.divergence,
      })
      expect(request.cost).toBeCloseTo(requestCost(request, price).total, 9)
    })
    expect(priced.cost.total).toBeCloseTo(
      priced.requests.reduce((sum, request) => sum + request.cost, 0),
      6,
    )
    expect(priced.summaryCosts).toEqual(
      priced.requests.filter((request) => request.purpose === 'compaction').map((request) => request.cost),
    )
    expect(priced.summaryCosts.length).toBe(run.summaryCalls.length)
    expect(priced.costUsd).toBeCloseTo((priced.cost.total * 2) / 1e6, 12)
    expect(priced.floor).toEqual(costFloor(run.requests, run.outputTokens, price).cost)
    expect(priced.efficiency).toBeCloseTo((priced.floor?.total as number) / priced.cost.total, 12)
  })

  // Whatever the design and the price, no run can beat the floor of its own schedule.
  it.each(
    STRATEGIES.flatMap((strategy) =>
      (['deepseek', 'anthropic-5m', 'anthropic-1h'] as const).map(
        (price) => [strategy, price] as [WorkloadStrategy, PriceProfileName],
      ),
    ),
  )('%s under %s stays at or above its floor', async (strategy, price) => {
    const priced = priceRun(await runWorkload({ ...small, strategy }), PRICE_PROFILES[price])
    expect(priced.floor?.total).toBeLessThanOrEqual(priced.cost.total + 1e-9)
    expect(priced.efficiency).toBeGreaterThan(0)
    expect(priced.efficiency).toBeLessThanOrEqual(1 + 1e-12)
  })

  it('shows the waste of a cold summary call: legacy is further from its floor than warmfold', async () => {
    const price = PRICE_PROFILES['anthropic-5m']
    const warm = priceRun(await runWorkload({ ...small, strategy: 'warmfold' }), price)
    const legacy = priceRun(await runWorkload({ ...small, strategy: 'legacy' }), price)
    expect(legacy.efficiency).toBeLessThan(warm.efficiency as number)
    expect(warm.cost.total).toBeLessThan(legacy.cost.total)
  })

  // The bench's claim, on a small run: among the designs whose summarizer sees at least 90 % of
  // the region, none is cheaper than warmfold, whatever the price.
  let shared: Promise<{ strategy: WorkloadStrategy; run: WorkloadRun }[]> | undefined
  it.each(['deepseek', 'openai', 'anthropic-5m', 'anthropic-1h'] as const)(
    'under %s warmfold is the cheapest design whose summarizer sees ≥ 90 %% of the region',
    async (price) => {
      // The six runs are priced four times: run once.
      shared ??= Promise.all(
        STRATEGIES.map(async (strategy) => ({
          strategy,
          run: await runWorkload({ window: 16000, steps: 40, strategy }),
        })),
      )
      const runs = await shared
      const costs = runs.map(({ strategy, run }) => ({
        strategy,
        coverage: Math.min(...run.summaryCoverage),
        total: priceRun(run, PRICE_PROFILES[price]).cost.total,
        folds: run.summaryCalls.length,
      }))
      for (const entry of costs) expect(entry.folds).toBeGreaterThan(0)
      const warmfold = costs.find((entry) => entry.strategy === 'warmfold')
      for (const entry of costs.filter((other) => other.coverage >= 0.9))
        expect(warmfold?.total).toBeLessThanOrEqual(entry.total)
    },
    60_000,
  )
})
