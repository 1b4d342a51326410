import { recordCordisPrints } from '@warmfold/test-utils'
import { describe, expect, it } from 'vitest'
import { main as usage } from '../examples/usage.ts'

// The README shows this file verbatim (checked by test-utils' readme-examples test).
describe('README examples run', () => {
  it('usage: the proxy listens on 127.0.0.1 and says where', async () => {
    const { result, printed } = await recordCordisPrints(usage)
    expect(printed).toEqual([])
    expect(result).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
  })
})
