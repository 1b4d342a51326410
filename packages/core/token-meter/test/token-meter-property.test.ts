import { Session } from '@warmfold/session'
import { createTestContext } from '@warmfold/test-utils'
import type { TestContext } from '@warmfold/test-utils'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { TokenMeasurement } from '../src/index.ts'
import { TokenMeter } from '../src/index.ts'
import type { PlainMeasurement } from './meter-fixtures.ts'
import { applyOperation, idSource, operations, plain, referenceMeasurement } from './meter-fixtures.ts'

async function mounted(config: TokenMeter.Config): Promise<TestContext> {
  const test = await createTestContext()
  test.ctx.plugin(TokenMeter, config)
  return test
}

async function finish(...tests: TestContext[]): Promise<void> {
  for (const test of tests) {
    await test.dispose()
    test.assertClean()
  }
}

const utf8 = new TextEncoder()
const configs: [string, TokenMeter.Config][] = [
  ['the default heuristic', {}],
  // Fractional on purpose: prices are rounded up, so add/subtract stays exact.
  ['a fractional UTF-8 tokenizer', { tokenizer: (text: string) => utf8.encode(text).length / 3 }],
]

describe.each(configs)('incremental measurement with %s', (_, config) => {
  it('equals a fresh meter measuring the final session once, and the naive reference at every measured step', async () => {
    const incremental = await mounted(config)
    const fresh = await mounted(config)
    try {
      fc.assert(
        fc.property(operations, fc.array(fc.boolean(), { maxLength: 50 }), (list, mask) => {
          const session = new Session('prop')
          const id = idSource()
          const meter = incremental.ctx.tokenMeter
          // Measurements whose lazy `nodes` are read only at the end, after later appends and
          // replaces, with the reference taken at the moment they were measured.
          const taken: [TokenMeasurement, PlainMeasurement][] = []
          for (const [index, operation] of list.entries()) {
            applyOperation(session, operation, id)
            if (mask[index] ?? true) {
              const measurement = meter.measure(session)
              const reference = referenceMeasurement(session, meter)
              expect(measurement.surfaceTokens).toBe(reference.surfaceTokens)
              expect(measurement.envelopeTokens).toBe(reference.envelopeTokens)
              expect(measurement.baseline).toEqual(reference.baseline)
              expect(measurement.totalTokens).toBe(reference.totalTokens)
              taken.push([measurement, reference])
            }
          }
          const last = meter.measure(session)
          for (const [measurement, reference] of taken) expect(measurement.nodes).toEqual(reference.nodes)
          expect(plain(last)).toEqual(plain(fresh.ctx.tokenMeter.measure(session)))
          expect(plain(last)).toEqual(referenceMeasurement(session, meter))
          const messageSum = session.deriveMessages().reduce((sum, message) => sum + meter.estimateMessage(message), 0)
          expect(last.surfaceTokens).toBe(messageSum)
          expect(last.nodes.map((node) => node.seq)).toEqual(session.surface.nodes)
          for (const node of last.nodes) expect(meter.priceOf(session, node.seq)).toBe(node.tokens)
        }),
        { numRuns: 150 },
      )
    } finally {
      await finish(incremental, fresh)
    }
  }, 30_000)
})
