import type { NumberKind } from '@warmfold/test-utils'
import { badNumbers, createTestContext, refusal } from '@warmfold/test-utils'
import { describe, expect, it } from 'vitest'
import { ToolRegistry } from '../src/index.ts'
import { validateAgentOptions } from '../src/agent-options.ts'
import { validateForkOptions } from '../src/fork-options.ts'

const ROUTE = { provider: 'p', model: 'm' }

const KEYS: ReadonlyArray<readonly [key: string, kind: NumberKind, extra: readonly number[]]> = [
  ['maxTokens', 'integer', [0]],
  ['maxSteps', 'integer', [0]],
  ['toolTimeoutMs', 'milliseconds', [0]],
  ['maxStepRetries', 'integer', []],
]

const CASES = [
  ...KEYS.flatMap(([key, kind, extra]) => [
    ...badNumbers(kind).map(({ value, shown }) => [key, value, shown] as const),
    ...extra.map((value) => [key, value, String(value)] as const),
  ]),
  // The widest range any provider documents.
  ...[Number.NaN, Number.POSITIVE_INFINITY, -0.5, 2.5].map((value) => ['temperature', value, String(value)] as const),
]

describe('agent options: every number has a range', () => {
  it.each(CASES)('refuses %s = %s, naming the option and the value', (key, value, shown) => {
    const message = refusal(() => validateAgentOptions({ ...ROUTE, [key]: value }), key, shown)
    expect(message).toMatch(/^agent option /)
  })

  it("accepts Node's timer limit as toolTimeoutMs, and temperature 0 and 2", () => {
    expect(validateAgentOptions({ ...ROUTE, toolTimeoutMs: 2_147_483_647, temperature: 2 })).toMatchObject({
      toolTimeoutMs: 2_147_483_647,
    })
    expect(validateAgentOptions({ ...ROUTE, temperature: 0 }).temperature).toBe(0)
  })

  it.each(badNumbers('integer'))('refuses a fork maxSteps of $shown', ({ value, shown }) => {
    refusal(() => validateForkOptions({ task: 'go', maxSteps: value }), 'maxSteps', shown)
  })
})

describe("a tool's timeoutMs", () => {
  it.each([...badNumbers('milliseconds'), { value: 0, shown: '0' }])(
    'refuses $shown at registration, naming the tool (above the timer limit it timed out after 1 ms)',
    async ({ value, shown }) => {
      const context = await createTestContext()
      context.ctx.plugin(ToolRegistry)
      const tool = { name: 'slow', description: '', parameters: {}, timeoutMs: value, execute: () => 'ok' }
      const message = refusal(() => context.ctx.tools.register(tool), 'timeoutMs', shown)
      expect(message).toMatch(/^ctx\.tools\.register: tool "slow": timeoutMs must be an integer from 1 to 2147483647/)
      context.assertClean()
      await context.dispose()
    },
  )
})
