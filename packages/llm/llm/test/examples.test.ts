import { recordCordisPrints } from '@warmfold/test-utils'
import { describe, expect, it } from 'vitest'
import { main as scriptedAdapter } from '../examples/scripted-adapter.ts'
import { main as usage } from '../examples/usage.ts'

// The README shows these files verbatim (checked by test-utils' readme-examples test).
describe('README examples run', () => {
  it('usage: registers an adapter from a plugin, awaits the model info, generates with defaults materialized', async () => {
    const { result, printed } = await recordCordisPrints(usage)
    expect(printed).toEqual([])
    expect(result).toEqual({
      reply: 'The assertion expects 4 but `add` subtracts.',
      finishReason: 'stop',
      contextWindow: 131072,
      sentEffort: 'high',
      sentMaxTokens: 8192,
    })
  })

  it('scripted adapter: one reply per call, an error reply thrown, requests recorded', async () => {
    const { result, printed } = await recordCordisPrints(scriptedAdapter)
    expect(printed).toEqual([])
    expect(result).toEqual({ first: 'first reply', second: 'RATE_LIMITED', efforts: ['high', 'high'] })
  })
})
