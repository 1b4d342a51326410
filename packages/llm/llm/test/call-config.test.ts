import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { CallConfig } from '../src/index.ts'
import { callConfigEquals, createUserMessage, pickCallConfig } from '../src/index.ts'
import { CALL_CONFIG_KEYS } from '../src/call-config.ts'

const base: CallConfig = { provider: 'deepseek', model: 'v4' }

describe('callConfigEquals', () => {
  it('treats an absent field as different from any present value, and equal only to absent', () => {
    expect(callConfigEquals(base, { ...base })).toBe(true)
    expect(callConfigEquals(base, { ...base, temperature: 0 })).toBe(false)
    expect(callConfigEquals({ ...base, reasoningEffort: 'high' }, base)).toBe(false)
    expect(callConfigEquals(base, { ...base, stop: [] })).toBe(false)
    expect(callConfigEquals(base, { ...base, temperature: undefined })).toBe(true)
  })

  it('compares stop element-wise and in order', () => {
    expect(callConfigEquals({ ...base, stop: ['a', 'b'] }, { ...base, stop: ['a', 'b'] })).toBe(true)
    expect(callConfigEquals({ ...base, stop: ['a', 'b'] }, { ...base, stop: ['b', 'a'] })).toBe(false)
    expect(callConfigEquals({ ...base, stop: ['a'] }, { ...base, stop: ['a', 'b'] })).toBe(false)
  })

  it('ignores key order', () => {
    const left: CallConfig = {
      provider: 'p',
      model: 'm',
      temperature: 0.2,
      stop: ['x'],
      reasoningEffort: 'low',
      maxTokens: 10,
    }
    const right: CallConfig = {
      maxTokens: 10,
      reasoningEffort: 'low',
      stop: ['x'],
      temperature: 0.2,
      model: 'm',
      provider: 'p',
    }
    expect(callConfigEquals(left, right)).toBe(true)
  })

  it('counts a maxTokens difference', () => {
    expect(callConfigEquals({ ...base, maxTokens: 4096 }, { ...base, maxTokens: 8192 })).toBe(false)
    expect(callConfigEquals({ ...base, maxTokens: 4096 }, base)).toBe(false)
  })

  it('looks only at the call config fields of a larger object', () => {
    const left = { ...base, messages: [createUserMessage('a')], system: 'one' }
    const right = { ...base, messages: [createUserMessage('b')], system: 'two' }
    expect(callConfigEquals(left, right)).toBe(true)
  })

  it('agrees with a field-by-field comparison for arbitrary configs', () => {
    const config = fc.record(
      {
        provider: fc.constantFrom('p', 'q'),
        model: fc.constantFrom('m', 'n'),
        reasoningEffort: fc.constantFrom('low', 'high'),
        temperature: fc.constantFrom(0, 0.5),
        stop: fc.array(fc.constantFrom('a', 'b'), { maxLength: 2 }),
        maxTokens: fc.constantFrom(100, 200),
      },
      { requiredKeys: ['provider', 'model'] },
    )
    fc.assert(
      fc.property(config, config, (left, right) => {
        const fieldwise = CALL_CONFIG_KEYS.every((key) => JSON.stringify(left[key]) === JSON.stringify(right[key]))
        expect(callConfigEquals(left, right)).toBe(fieldwise)
        expect(callConfigEquals(left, left)).toBe(true)
      }),
    )
  })
})

describe('pickCallConfig', () => {
  it('keeps exactly the defined call config fields', () => {
    const picked = pickCallConfig({
      ...base,
      temperature: undefined,
      maxTokens: 5,
      messages: [],
      sessionId: 's',
    } as CallConfig)
    expect(picked).toStrictEqual({ provider: 'deepseek', model: 'v4', maxTokens: 5 })
  })
})
