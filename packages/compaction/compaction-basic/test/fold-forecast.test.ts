import type { Session } from '@warmfold/session'
import { describe, expect, it } from 'vitest'
import type { FoldForecastInput, SyncFold } from '../src/triggers/fold-forecast.ts'
import { forecastBackgroundFold } from '../src/triggers/fold-forecast.ts'
import { FoldPace } from '../src/triggers/fold-pace.ts'
import { MAX_STALE_PAUSE, StaleHistory, stalePause } from '../src/triggers/stale-history.ts'

/** A 12,000-token window: H = 9,600, retain 1,920, 600 tokens of system prompt and tools. */
const SYNC: SyncFold = {
  thresholdTokens: 9600,
  fixedTokens: 600,
  retainTokens: 1920,
  headCapTokens: 9000,
  toleranceTokens: 0,
  worstGrowthTokens: 500,
}

function input(overrides: Partial<FoldForecastInput>): FoldForecastInput {
  return {
    totalTokens: 8000,
    shadowedTokens: 7000,
    regionTokens: 7500,
    checkpointTokens: 80,
    growthTokens: 500,
    softTokens: 6000,
    sync: SYNC,
    ...overrides,
  }
}

describe('forecastBackgroundFold', () => {
  it('starts a fold that leaves the request below S and folds at least what a fold at H would', () => {
    // 8,000 − 7,000 + 80 + 500.
    expect(forecastBackgroundFold(input({}))).toEqual({ start: true, projectedTokens: 1580 })
  })

  it('refuses a fold whose kept tail alone is at or above S: certain before any growth, whatever the summary', () => {
    // The newest step is a 5,000-token result: the region can only be the 2,000 tokens before it.
    const forecast = forecastBackgroundFold(input({ shadowedTokens: 2000, regionTokens: 2000, growthTokens: 0 }))
    expect(forecast).toMatchObject({ start: false, reason: 'stale', projectedTokens: 6080 })
    expect(forecast.start || forecast.detail).toMatch(
      /at least about 6080 tokens .* at or above the soft threshold \(6000\)/,
    )
  })

  it('counts the expected growth before the swap, the boundary included: at S it is stale', () => {
    const stale = forecastBackgroundFold(input({ growthTokens: 4920, sync: undefined }))
    expect(stale).toMatchObject({ start: false, reason: 'stale' })
    const below = forecastBackgroundFold(input({ growthTokens: 4919, sync: undefined }))
    expect(below).toMatchObject({ start: true, projectedTokens: 5999 })
  })

  it('refuses a fold smaller than a fold at H would summarize (H − fixed − retain), less the tolerance', () => {
    // 9,600 − 600 − 1,920 = 7,080.
    expect(forecastBackgroundFold(input({ regionTokens: 7079 }))).toMatchObject({ start: false, reason: 'small' })
    expect(forecastBackgroundFold(input({ regionTokens: 7080 })).start).toBe(true)
    const tolerant = { ...SYNC, toleranceTokens: 300 }
    expect(forecastBackgroundFold(input({ regionTokens: 6780, sync: tolerant })).start).toBe(true)
    expect(forecastBackgroundFold(input({ regionTokens: 6779, sync: tolerant })).start).toBe(false)
  })

  it('when the summary may not be in hand before H, compares with a fold at the request the swap comes at', () => {
    // 9,400 + the worst growth over the fold's boundaries (2,000) = 11,400: a fold there summarizes 8,880.
    const late = input({ totalTokens: 9400, sync: { ...SYNC, headCapTokens: 20_000, worstGrowthTokens: 2000 } })
    expect(forecastBackgroundFold({ ...late, regionTokens: 8879 })).toMatchObject({
      start: false,
      reason: 'small',
      detail: expect.stringContaining('at about 11400 tokens would summarize (at least 8880)'),
    })
    expect(forecastBackgroundFold({ ...late, regionTokens: 8880 }).start).toBe(true)
  })

  it('a fold capped by the summary budget compares with that cap, which binds a fold at H as much', () => {
    const capped = { ...SYNC, headCapTokens: 5000 }
    expect(forecastBackgroundFold(input({ regionTokens: 5000, sync: capped })).start).toBe(true)
    expect(forecastBackgroundFold(input({ regionTokens: 4999, sync: capped })).start).toBe(false)
  })

  it('without a fold at H to compare with (a fixed startRatio, an idle fold) only the stale rule applies', () => {
    expect(forecastBackgroundFold(input({ regionTokens: 100, sync: undefined })).start).toBe(true)
  })
})

/** A session whose log holds these fold ends, oldest first. */
function logOf(...ends: Array<'stale' | 'sync' | 'background' | 'timeout'>): Session {
  const data = {
    stale: { error: 'discarded', discarded: { reason: 'stale' }, timing: { mode: 'background' } },
    timeout: { error: 'discarded', discarded: { reason: 'timeout' }, timing: { mode: 'background' } },
    sync: { timing: { mode: 'sync' } },
    background: { timing: { mode: 'background' } },
  }
  const events = ends.flatMap((end) => [
    { type: 'user/message', data: {} },
    { type: 'compaction/end', data: data[end] },
  ])
  return { events } as unknown as Session
}

describe('StaleHistory and stalePause', () => {
  it('learns how far a stale fold came out above its forecast, and keeps the largest miss', () => {
    const history = new StaleHistory()
    history.started(3000)
    history.stale(5500)
    expect(history.missTokens).toBe(2500)
    history.started(4000)
    history.stale(4100)
    expect(history.missTokens).toBe(2500)
    // A stale discard of a fold started without a forecast teaches nothing.
    history.stale(9000)
    expect(history.missTokens).toBe(2500)
  })

  it("pauses background folds after two stale discards in a row, for longer as the streak grows, counted in folds on the turn's path", () => {
    expect(stalePause(logOf('stale'))).toBe(0)
    expect(stalePause(logOf('stale', 'stale'))).toBe(1)
    // Folds on the turn's path between them do not break the streak; another kind of discard neither.
    expect(stalePause(logOf('stale', 'sync', 'timeout', 'stale'))).toBe(1)
    expect(stalePause(logOf('stale', 'stale', 'sync'))).toBe(0)
    expect(stalePause(logOf('stale', 'stale', 'sync', 'stale'))).toBe(2)
    expect(stalePause(logOf('stale', 'stale', 'sync', 'stale', 'sync'))).toBe(1)
    expect(stalePause(logOf(...Array.from({ length: 12 }, () => 'stale' as const)))).toBe(MAX_STALE_PAUSE)
    // A background fold that landed ends the streak.
    expect(stalePause(logOf('stale', 'stale', 'background', 'stale'))).toBe(0)
  })
})

describe('FoldPace.largestGrowth', () => {
  it('is the largest growth over that many consecutive boundaries since the request last shrank', () => {
    const pace = new FoldPace()
    expect(pace.largestGrowth(2)).toBe(0)
    // Growths 500, 500, 2800, 500.
    for (const [at, tokens] of [
      [0, 1000],
      [1, 1500],
      [2, 2000],
      [3, 4800],
      [4, 5300],
    ] as const)
      pace.boundary(at, tokens)
    expect(pace.largestGrowth(1)).toBe(2800)
    expect(pace.largestGrowth(2)).toBe(3300)
    expect(pace.largestGrowth(4)).toBe(4300)
    // Fewer boundaries seen than asked for: all of them, and the largest once more for each missing one.
    expect(pace.largestGrowth(5)).toBe(7100)
    pace.boundary(5, 2000)
    expect(pace.largestGrowth(1)).toBe(0)
  })
})
