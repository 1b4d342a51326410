import { recordCordisPrints } from '@warmfold/test-utils'
import { describe, expect, it } from 'vitest'
import { main as pruneContentExample } from '../examples/prune-content.ts'
import { main as usage } from '../examples/usage.ts'
import { PRUNE_MARKER } from '../src/index.ts'

// The README shows these files verbatim (checked by test-utils' readme-examples test).
describe('README examples run', () => {
  it('usage: prunes everywhere when the priced plan alone clears the threshold', async () => {
    const { result, printed } = await recordCordisPrints(() => usage(4000, 2))
    expect(printed).toEqual([])
    expect(result.plan.map((entry) => entry.seq)).toEqual([2, 4])
    expect(result.measuredTokens - result.saving).toBeLessThanOrEqual(4000)
    expect(result.pass.kind).toBe('prune-only')
    expect(result.pass.result.entries.map((entry) => entry.seq)).toEqual([2, 4])
    expect(result.after).toBe(result.measuredTokens - result.saving)
  })

  it('usage: prunes only the tail after the region a summary replays when pruning is not enough', async () => {
    const { result, printed } = await recordCordisPrints(() => usage(2000, 2))
    expect(printed).toEqual([])
    expect(result.measuredTokens - result.saving).toBeGreaterThan(2000)
    expect(result.pass.kind).toBe('tail-only')
    expect(result.pass.result.entries.map((entry) => entry.seq)).toEqual([4])
  })

  it('prune-content: head + marker + tail of the text, images kept, idempotent, small results untouched', () => {
    const { pruned, again, small, marker } = pruneContentExample()
    const text = Array.from({ length: 200 }, (_, line) => `line ${line}`).join('\n')
    expect(marker).toBe('\n[... tool result pruned by warmfold: middle omitted ...]\n')
    expect(pruned).toEqual([
      { type: 'text', text: text.slice(0, 40) + PRUNE_MARKER + text.slice(-20) },
      { type: 'image', mediaType: 'image/png', data: 'iVBORw0KGgo=' },
    ])
    expect(again).toBeNull()
    expect(small).toBeNull()
  })
})
