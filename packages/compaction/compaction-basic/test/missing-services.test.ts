import { MissingServiceError } from '@warmfold/agent-loop'
import { TokenMeter } from '@warmfold/token-meter'
import { afterEach, describe, expect, it } from 'vitest'
import type { EngineHarness } from './engine-fixture.ts'
import { mountEngine, stopAfter } from './engine-fixture.ts'

const harnesses: EngineHarness[] = []
afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.dispose()
})

const NO_METER =
  'BasicCompactionEngine needs ctx.tokenMeter, which is not mounted in its Context: mount @warmfold/token-meter (ctx.plugin(TokenMeter)) in the same Context'

describe('BasicCompactionEngine without the token meter', () => {
  it('mounts anyway, fails every turn naming @warmfold/token-meter, reports it once, and works once the meter is mounted', async () => {
    const harness = await mountEngine({ tokenMeter: false, conversation: stopAfter(2) })
    harnesses.push(harness)
    const { ctx, errors, warnings } = harness
    // cordis would keep an engine whose required inject is missing pending, and nothing would compact.
    expect(ctx.get('compaction')).toBeDefined()
    const agent = await ctx.agentLoop.create('no-meter', { provider: 'scripted', model: 'main' })
    for (const text of ['first', 'second']) {
      // The host hears of it from the turn itself, not only from the log.
      const result = await agent.followup(text)
      expect(result).toMatchObject({ reason: 'error', errorCode: 'SERVICE_MISSING', error: NO_METER })
      expect(agent.lastError).toMatchObject({
        code: 'TURN_FAILED',
        turnErrorCode: 'SERVICE_MISSING',
        cause: result.cause,
      })
    }
    const ends = agent.session.events.filter((event) => event.type === 'turn/end').map((event) => event.data)
    expect(ends).toEqual([
      { turn: 1, reason: 'error', steps: 1, errorCode: 'SERVICE_MISSING', error: NO_METER },
      { turn: 2, reason: 'error', steps: 1, errorCode: 'SERVICE_MISSING', error: NO_METER },
    ])
    expect(harness.conversation()).toEqual([])
    expect(errors).toHaveLength(1)
    expect(MissingServiceError.isInstance(errors[0]) && errors[0].message).toBe(NO_METER)
    expect(warnings).toEqual([])

    // Manual compaction says the same.
    const manual = await ctx.compaction.compactNow(agent).catch((caught: unknown) => caught)
    expect(MissingServiceError.isInstance(manual) && manual).toMatchObject({
      code: 'SERVICE_MISSING',
      service: 'tokenMeter',
      packageName: '@warmfold/token-meter',
      plugin: 'TokenMeter',
    })

    ctx.plugin(TokenMeter)
    agent.followup('third')
    await agent.whenIdle()
    expect(agent.session.events.at(-1)?.data).toEqual({ turn: 3, reason: 'stop', steps: 3 })
    expect(errors).toHaveLength(1)
  })
})
