import { describe, expect, it } from 'vitest'
import { BENCH_CONFIGURATIONS, benchDifferences } from '../compare-bench.ts'

describe('benchDifferences', () => {
  const run = { strategy: 'warmfold', summaryCalls: [{ cost: 1.5, audit: { dropped: [] } }], folds: 3 }

  it('finds nothing between equal documents, whatever their CLI version', () => {
    expect(benchDifferences({ version: '0.1.0', runs: [run] }, { version: '0.1.1', runs: [run] })).toEqual([])
  })

  it('names each differing field by its path, nested in arrays and objects', () => {
    const changed = { ...run, summaryCalls: [{ cost: 1.75, audit: { dropped: ['x'] } }], extra: true }
    expect(benchDifferences({ runs: [run] }, { runs: [run, run] })).toEqual([
      'runs[1]: undefined → {"strategy":"warmfold","summaryCalls":[{"cost":1.5,"audit":{"dropped":[]}}],"folds":3}',
    ])
    expect(benchDifferences({ runs: [run] }, { runs: [changed] })).toEqual([
      'runs[0].summaryCalls[0].cost: 1.5 → 1.75',
      'runs[0].summaryCalls[0].audit.dropped[0]: undefined → "x"',
      'runs[0].extra: undefined → true',
    ])
  })

  it('tells an array from an object with the same keys, and a nested version field counts', () => {
    expect(benchDifferences({ a: ['x'] }, { a: { 0: 'x' } })).toEqual(['a: ["x"] → {"0":"x"}'])
    expect(benchDifferences({ runs: [{ version: 1 }] }, { runs: [{ version: 2 }] })).toEqual(['runs[0].version: 1 → 2'])
  })

  it('benches the three configurations issue [4.1] names', () => {
    expect(BENCH_CONFIGURATIONS.map((configuration) => configuration.args.join(' '))).toEqual([
      '',
      '--profile anthropic --price anthropic-5m --latency sonnet-class',
      '--workload coding',
    ])
  })
})
