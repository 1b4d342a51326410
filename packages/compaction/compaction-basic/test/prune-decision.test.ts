import {
  createAssistantMessage,
  createToolResultMessage,
  createUserMessage,
  textBlock,
  toolCallBlock,
} from '@warmfold/llm'
import { Session } from '@warmfold/session'
import type { TokenMeasurement } from '@warmfold/token-meter'
import { describe, expect, it } from 'vitest'
import type { PlannedPrune } from '../src/engine-services.ts'
import type { PruneDecisionInput } from '../src/triggers/prune-decision.ts'
import {
  cachePricesOf,
  decidePrune,
  DEFAULT_CACHE_PRICES,
  MAX_REQUESTS_SERVED,
} from '../src/triggers/prune-decision.ts'

const USER_TOKENS = 100
const ASSISTANT_TOKENS = 50
const TTL = 300_000
const ROUTE = { provider: 'p', model: 'm' }

/**
 * A session of one user message (100 tokens) and one tool step per entry of `results` (an
 * assistant call of 50 tokens, then a result of that many tokens), with the measurement that
 * prices it so. Positions: user 0, step i's call 2i − 1 and result 2i.
 */
function grown(results: readonly number[]): { session: Session; measurement: TokenMeasurement } {
  const session = new Session('decision')
  const prices: number[] = []
  session.append('user/message', { message: createUserMessage('Refactor the loader.') }, 'append')
  prices.push(USER_TOKENS)
  for (const [index, tokens] of results.entries()) {
    const call = toolCallBlock(`call-${index}`, 'read', `{"path":"src/${index}.ts"}`)
    session.append(
      'assistant/message',
      { message: createAssistantMessage([textBlock('Reading.'), call], ROUTE) },
      'append',
    )
    session.append('tool/result', { message: createToolResultMessage(`call-${index}`, `file ${index}`) }, 'append')
    prices.push(ASSISTANT_TOKENS, tokens)
  }
  const nodes = session.surface.nodes.map((seq, position) => ({ seq, tokens: prices[position] as number }))
  const total = prices.reduce((sum, tokens) => sum + tokens, 0)
  const measurement = {
    nodes,
    surfaceTokens: total,
    envelopeTokens: 0,
    totalTokens: total,
    baseline: { kind: 'heuristic', tokens: total },
  } as TokenMeasurement
  return { session, measurement }
}

/** A plan that prunes the result at `position` of `measurement` down to `prunedTokens`. */
function pruneAt(measurement: TokenMeasurement, position: number, prunedTokens: number): PlannedPrune[] {
  const node = measurement.nodes[position]!
  return [{ seq: node.seq, position, originalTokens: node.tokens, prunedTokens }]
}

/**
 * Four steps: results 1000, 200, 200, 200 (1900 tokens on the surface, 475 per step); pruning
 * the first result to 100 saves 900 tokens per request and re-prefills 850 (positions 2..8, the
 * pruned result at its new price).
 */
function fourSteps(overrides: Partial<PruneDecisionInput> = {}): PruneDecisionInput {
  const { session, measurement } = grown([1000, 200, 200, 200])
  return {
    session,
    plan: pruneAt(measurement, 2, 100),
    measurement,
    thresholdTokens: 1500,
    prices: DEFAULT_CACHE_PRICES,
    cacheTtlMs: TTL,
    lastRequestAt: 1_000_000,
    now: 1_000_000 + 10_000,
    ...overrides,
  }
}

describe('decidePrune: whether a prune that alone clears the pressure lands, or the engine folds', () => {
  it('while the cache is warm and the saving over the forecast requests is below the re-prefill, it folds', () => {
    const decision = decidePrune(fourSteps())
    // headroom 1500 − (1900 − 900) = 500 tokens at 475 per request: 2 requests served.
    expect(decision).toEqual({
      action: 'fold',
      results: 1,
      savedTokens: 900,
      rewrittenTokens: 850,
      requestsServed: 2,
      growthTokens: 475,
      cacheWarm: true,
      cacheRead: 0.1,
      cacheWrite: 1.25,
      saving: 180,
      cost: 977.5,
      reason:
        'the re-prefill the rewrite causes exceeds the saving over the next 2 requests; folding instead, where ' +
        'pruning the retained tail is free',
    })
    expect(Object.isFrozen(decision)).toBe(true)
  })

  it('lands when the saving over the forecast requests exceeds the re-prefill, crediting at most MAX_REQUESTS_SERVED', () => {
    const decision = decidePrune(fourSteps({ thresholdTokens: 100_000 }))
    expect(decision).toMatchObject({
      action: 'prune',
      requestsServed: MAX_REQUESTS_SERVED,
      saving: 900 * MAX_REQUESTS_SERVED * 0.1,
      cost: 977.5,
      reason: `the saving over the next ${MAX_REQUESTS_SERVED} requests exceeds the re-prefill the rewrite causes`,
    })
  })

  it('counts the cache cold from the moment the TTL has run out since the last request (not a millisecond before)', () => {
    const lastRequestAt = 1_000_000
    const atTtl = decidePrune(fourSteps({ lastRequestAt, now: lastRequestAt + TTL }))
    expect(atTtl).toMatchObject({ action: 'prune', cacheWarm: false, cost: 0, saving: 180 })
    expect(atTtl.reason).toBe(
      'the provider no longer holds the prefix (the last request is older than the cache TTL), so the rewrite ' +
        'breaks nothing',
    )
    expect(decidePrune(fourSteps({ lastRequestAt, now: lastRequestAt + TTL - 1 }))).toMatchObject({
      action: 'fold',
      cacheWarm: true,
    })
  })

  it('after a resume (no request seen by this engine) it counts the cache warm, however late it is', () => {
    // A resumed engine has no lastRequestAt: the provider may still hold the prefix, so the rewrite is priced.
    const decision = decidePrune(fourSteps({ lastRequestAt: undefined, now: 9_000_000_000_000 }))
    expect(decision).toMatchObject({ action: 'fold', cacheWarm: true, cost: 977.5, requestsServed: 2 })
  })

  it('a model without a cache TTL never goes cold', () => {
    const decision = decidePrune(fourSteps({ cacheTtlMs: undefined, lastRequestAt: 0, now: 9_000_000_000_000 }))
    expect(decision).toMatchObject({ action: 'fold', cacheWarm: true })
  })

  it('with fewer than two steps on the surface the growth is unknown: no request is credited, it folds', () => {
    const { session, measurement } = grown([1000])
    const decision = decidePrune({ ...fourSteps(), session, measurement, plan: pruneAt(measurement, 2, 100) })
    expect(decision).toMatchObject({ action: 'fold', growthTokens: null, requestsServed: 0, saving: 0 })
    expect(decision.reason).toBe(
      'too few steps are logged to forecast how many requests the pruned history would serve; folding instead',
    )
  })

  it('where a cached read costs as much as a write, the rewrite costs nothing extra and lands', () => {
    const same = decidePrune(fourSteps({ prices: { read: 1, write: 1 } }))
    expect(same).toMatchObject({ action: 'prune', cost: 0, cacheWarm: true })
    expect(same.reason).toBe('a cached read costs as much as a write here, so the rewrite costs nothing extra')
    // A write cheaper than a read is no cost either.
    expect(decidePrune(fourSteps({ prices: { read: 1, write: 0.5 } }))).toMatchObject({ action: 'prune', cost: 0 })
  })

  it('forecasts growth from the newest eight steps only, and re-prefills from the first rewritten result', () => {
    // Two early steps of 5000-token results, then eight of 100: the growth is the newest eight's 150 per step.
    const { session, measurement } = grown([5000, 5000, 100, 100, 100, 100, 100, 100, 100, 100])
    const plan = [...pruneAt(measurement, 4, 200), ...pruneAt(measurement, 2, 300)]
    const decision = decidePrune({ ...fourSteps(), session, measurement, plan, thresholdTokens: 4000 })
    expect(decision.growthTokens).toBe(150)
    expect(decision.savedTokens).toBe(9500)
    // From position 2 on: both pruned results at their new prices, 9 calls and 8 results as they are.
    expect(decision.rewrittenTokens).toBe(300 + 200 + 9 * ASSISTANT_TOKENS + 8 * 100)
    // Headroom 4000 − (11400 − 9500) = 2100 tokens at 150 per request.
    expect(decision.requestsServed).toBe(14)
    expect(decision.results).toBe(2)
  })

  it('a headroom that is already gone credits no request', () => {
    const decision = decidePrune(fourSteps({ thresholdTokens: 900 }))
    expect(decision).toMatchObject({ requestsServed: 0, saving: 0, action: 'fold' })
  })
})

describe('cachePricesOf', () => {
  it("uses the model's prices, else the dearest common case, and refuses a price that is not a finite number ≥ 0", () => {
    expect(cachePricesOf(undefined, 'p/m')).toBe(DEFAULT_CACHE_PRICES)
    expect(cachePricesOf({ read: 0.5, write: 1 }, 'p/m')).toEqual({ read: 0.5, write: 1 })
    expect(() => cachePricesOf({ read: Number.NaN, write: 1 }, 'p/m')).toThrow(
      'compaction for p/m: ModelInfo.cachePrices.read must be a finite number ≥ 0, got NaN',
    )
    expect(() => cachePricesOf({ read: 0.1, write: -1 }, 'p/m')).toThrow(/cachePrices\.write .* got -1$/)
  })
})
