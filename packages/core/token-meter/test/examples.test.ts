import { recordCordisPrints } from '@warmfold/test-utils'
import { describe, expect, it } from 'vitest'
import { main as usage } from '../examples/usage.ts'

// The README shows this file verbatim (checked by test-utils' readme-examples test).
describe('README examples run', () => {
  it('usage: anchors on the reported prompt and estimates what was appended since', async () => {
    const { result, printed } = await recordCordisPrints(usage)
    expect(printed).toEqual([])
    // From the README's formula: message = 4 + text block (ceil(chars / 4) + 4).
    const question = 4 + (Math.ceil(24 / 4) + 4) // 'Why is the test failing?'
    const reply = 4 + (Math.ceil(44 / 4) + 4) // 'The assertion expects 4 but `add` subtracts.'
    const fix = 4 + (Math.ceil(7 / 4) + 4) // 'Fix it.'
    expect(result.baseline).toEqual({
      kind: 'usage',
      tokens: 1200 + reply + fix,
      anchorSeq: 2,
      reportedPromptTokens: 1200,
    })
    expect(result.totalTokens).toBe(1200 + reply + fix)
    expect(result.nodes).toEqual([
      { seq: 1, tokens: question },
      { seq: 2, tokens: reply },
      { seq: 3, tokens: fix },
    ])
    expect(result.compact).toBe(false)
  })
})
