import { describe, expect, it } from 'vitest'
import { parseCompactionConfig, resolveBudget, resolvePolicy } from '../src/engine-parts.ts'
import { KEEP_USER_MESSAGES_DEFAULT, keptUserBudget } from '../src/config/keep-user-messages.ts'
import { mountEngine, oneToolStepPerTurn, ROUTE } from './engine-fixture.ts'

describe('config', () => {
  it('applies documented defaults', () => {
    const config = parseCompactionConfig({})
    expect(config.auto).toBe(true)
    expect(resolvePolicy(config, 'p', 'm')).toEqual({
      thresholdRatio: 0.8,
      retainRatio: 0.16,
      retainTokens: undefined,
      headroomTokens: 0,
      maxTokens: 8192,
      summaryMarginRatio: 0.1,
      summarizationProvider: undefined,
      summarizationModel: undefined,
      compactionRetries: 1,
      maxOverflowRetries: 1,
      summaryBudget: { retries: 2, growth: 2 },
      keepUserMessages: { windowShare: 0.05, maxTokens: 20_000 },
      summaryDeadlineMs: 900_000,
    })
  })

  it.each([
    [{ thresholdRatoi: 0.5 }, /unknown key "thresholdRatoi"/],
    [{ retainRatio: 0.1, retainTokens: 100 }, /retainRatio and retainTokens are exclusive/],
    [
      { summarizationProvider: 'p' },
      /summarizationProvider and summarizationModel must be set together \(got only summarizationProvider\)/,
    ],
    [{ thresholdRatio: 1.5 }, /thresholdRatio/],
    [{ maxTokens: 0 }, /maxTokens/],
    [{ summaryMarginRatio: 1 }, /summaryMarginRatio must be in \[0, 1\), got 1/],
    [{ summaryMarginRatio: -0.1 }, /summaryMarginRatio/],
    [
      { modelPolicies: [{ provider: 'p', model: 'm', retain: 1 }] },
      /modelPolicies\[0\] \(p\/m\): unknown key "retain"/,
    ],
    [
      {
        modelPolicies: [
          { provider: 'p', model: 'm' },
          { provider: 'p', model: 'm' },
        ],
      },
      /modelPolicies\[1\] \(p\/m\): duplicate override/,
    ],
    [
      { retainTokens: 100, modelPolicies: [{ provider: 'p', model: 'm', summarizationModel: 'x' }] },
      /modelPolicies\[0\].*set together/,
    ],
    [{ summaryBudget: { growth: 1 } }, /summaryBudget\.growth must be a finite number above 1, got 1/],
    [{ summaryBudget: { retries: -1 } }, /summaryBudget/],
    [{ summaryBudget: { retries: 1.5 } }, /summaryBudget/],
    [{ summaryBudget: { fallbackEffort: '' } }, /summaryBudget\.fallbackEffort must not be empty/],
    [
      { summaryBudget: { fallback: 'low' } },
      /summaryBudget: unknown key "fallback"; known keys: retries, growth, fallbackEffort/,
    ],
    [
      { modelPolicies: [{ provider: 'p', model: 'm', summaryBudget: { growth: 0.5 } }] },
      /modelPolicies\[0\] \(p\/m\): summaryBudget\.growth must be a finite number above 1, got 0\.5/,
    ],
    [{ keepUserMessages: { maxTokens: 0 } }, /keepUserMessages/],
    [{ keepUserMessages: {} }, /keepUserMessages/],
    [{ keepUserMessages: true }, /keepUserMessages/],
    [
      { keepUserMessages: { maxTokens: 100, tokens: 5 } },
      /keepUserMessages: unknown key "tokens"; known keys: maxTokens/,
    ],
    [
      { modelPolicies: [{ provider: 'p', model: 'm', keepUserMessages: { max: 1, maxTokens: 5 } }] },
      /modelPolicies\[0\] \(p\/m\): keepUserMessages: unknown key "max"/,
    ],
    [{ background: { startRatio: 1 } }, /background\.startRatio must be 'adaptive' or a number in \(0, 1\), got 1/],
    [{ background: { startRatio: 'fast' } }, /background\.startRatio expected "adaptive" \| number but got "fast"/],
    [{ background: { maxWaitMs: -1 } }, /background\.maxWaitMs expected number >= 0 but got -1/],
    [
      { background: { enable: true } },
      /background: unknown key "enable" \(did you mean "enabled"\?\); known keys: enabled, startRatio, maxWaitMs, prewarm/,
    ],
  ])('rejects %j naming the key', (config, message) => {
    expect(() => parseCompactionConfig(config)).toThrow(message)
  })

  it('keeps user messages by default within 5 % of the window (at most 20,000 tokens), per model too, none with false', () => {
    const config = parseCompactionConfig({
      keepUserMessages: { maxTokens: 2000 },
      modelPolicies: [
        { provider: 'p', model: 'small', keepUserMessages: { maxTokens: 300 } },
        { provider: 'p', model: 'none', keepUserMessages: false },
      ],
    })
    expect(resolvePolicy(config, 'p', 'm').keepUserMessages).toEqual({ maxTokens: 2000 })
    expect(resolvePolicy(config, 'p', 'small').keepUserMessages).toEqual({ maxTokens: 300 })
    expect(resolvePolicy(config, 'p', 'none')).not.toHaveProperty('keepUserMessages')
    expect(resolvePolicy(parseCompactionConfig({ keepUserMessages: false }), 'p', 'm')).not.toHaveProperty(
      'keepUserMessages',
    )
    const byDefault = resolvePolicy(parseCompactionConfig({}), 'p', 'm').keepUserMessages
    expect(byDefault).toEqual(KEEP_USER_MESSAGES_DEFAULT)
    expect(keptUserBudget(byDefault, 8000)).toEqual({ maxTokens: 400 })
    expect(keptUserBudget(byDefault, 128_000)).toEqual({ maxTokens: 6400 })
    expect(keptUserBudget(byDefault, 1_000_000)).toEqual({ maxTokens: 20_000 })
    expect(keptUserBudget(resolvePolicy(config, 'p', 'm').keepUserMessages, 8000)).toEqual({ maxTokens: 2000 })
    expect(keptUserBudget(undefined, 8000)).toBeUndefined()
  })

  it('merges an exact model override, replacing the retention form wholesale', () => {
    const config = parseCompactionConfig({
      retainRatio: 0.2,
      modelPolicies: [{ provider: 'p', model: 'big', retainTokens: 5000, thresholdRatio: 0.9 }],
    })
    expect(resolvePolicy(config, 'p', 'big')).toMatchObject({
      retainTokens: 5000,
      retainRatio: undefined,
      thresholdRatio: 0.9,
    })
    expect(resolvePolicy(config, 'p', 'small')).toMatchObject({ retainRatio: 0.2, thresholdRatio: 0.8 })
  })

  it('merges summaryBudget key by key: an override may set only fallbackEffort', () => {
    const config = parseCompactionConfig({
      summaryBudget: { retries: 4 },
      modelPolicies: [{ provider: 'p', model: 'reasoner', summaryBudget: { fallbackEffort: 'low' } }],
    })
    expect(resolvePolicy(config, 'p', 'reasoner').summaryBudget).toEqual({
      retries: 4,
      growth: 2,
      fallbackEffort: 'low',
    })
    expect(resolvePolicy(config, 'p', 'other').summaryBudget).toEqual({ retries: 4, growth: 2 })
  })

  it('computes threshold = min(window × ratio, window − headroom − reserved output) and rejects retain ≥ threshold', () => {
    const policy = resolvePolicy(parseCompactionConfig({ headroomTokens: 1000 }), 'p', 'm')
    expect(resolveBudget(policy, 8000, 500, 'p/m')).toEqual({
      contextWindow: 8000,
      reservedOutputTokens: 500,
      thresholdTokens: 6400,
      retainTokens: 1280,
    })
    expect(resolveBudget(policy, 8000, 2000, 'p/m').thresholdTokens).toBe(5000)
    const greedy = resolvePolicy(parseCompactionConfig({ retainTokens: 7000 }), 'p', 'm')
    expect(() => resolveBudget(greedy, 8000, 500, 'p/m')).toThrow(
      /retain \(7000 tokens, from retainTokens\) must be below the threshold \(6400 tokens/,
    )
  })

  it('fails at load with the key in the recorded error, and warns (without failing the step) on a budget error', async () => {
    const bad = await mountEngine({ engine: { retainRatio: 0.1, retainTokens: 5 } })
    expect(bad.errors.map(String).join('\n')).toMatch(/retainRatio and retainTokens are exclusive/)
    expect(bad.ctx.get('compaction')).toBeUndefined()
    await bad.dispose()

    const greedy = await mountEngine({ engine: { retainTokens: 7000 }, conversation: oneToolStepPerTurn })
    const agent = await greedy.ctx.agentLoop.create('greedy', { ...ROUTE })
    for (const text of ['hi', 'again']) {
      agent.followup(text)
      await agent.whenIdle()
    }
    expect(agent.session.events.at(-1)?.data).toMatchObject({ reason: 'stop' })
    // Four steps ran into the same budget error; it is reported once.
    expect(greedy.warnings).toHaveLength(1)
    expect(greedy.warnings[0]).toMatch(
      /compaction of session greedy failed; continuing the step \(said once per session\): .*retain \(7000 tokens/,
    )
    await greedy.dispose()
  })
})
