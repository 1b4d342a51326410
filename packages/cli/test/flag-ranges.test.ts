import { describe, expect, it } from 'vitest'
import { parseBenchArgs } from '../src/index.ts'

const PROBE = ['--cache-probe', 'http://127.0.0.1:9']

/** Every bench flag that takes a number, the flags it needs, and values past each end of its range. */
const FLAGS: ReadonlyArray<readonly [flag: string, needs: readonly string[], bad: readonly string[]]> = [
  ['--windows', [], ['NaN', 'Infinity', '-1', '4799', '2000001', '32000.5', '1e999']],
  ['--steps', [], ['NaN', 'Infinity', '-1', '0', '1001', '2.5']],
  ['--turns', [], ['NaN', 'Infinity', '-1', '0', '1001']],
  ['--idle', [], ['NaN', 'Infinity', '-1', '2592001', '1e999']],
  ['--step-seconds', [], ['NaN', 'Infinity', '-1', '2592001']],
  ['--probe-timeout', PROBE, ['NaN', 'Infinity', '-1', '0', '86401']],
  ['--temperature', [], ['NaN', 'Infinity', '-0.5', '2.5', '1e999']],
]

const CASES = FLAGS.flatMap(([flag, needs, bad]) => bad.map((value) => [flag, value, needs] as const))

describe('warmfold bench: every flag that takes a number has a range', () => {
  it.each(CASES)('refuses %s %s, naming the flag and the value', (flag, value, needs) => {
    let message = ''
    try {
      parseBenchArgs([...needs, flag, value])
    } catch (error) {
      message = (error as Error).message
    }
    expect(message).toContain(flag)
    expect(message).toContain(value)
  })
})
