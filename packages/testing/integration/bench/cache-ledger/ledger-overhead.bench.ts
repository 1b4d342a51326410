import { beforeAll, bench, describe } from 'vitest'
import { runWorkload } from '@warmfold/prefix-cache-testkit'

// What the ledger adds to `warmfold bench`: the same scripted run (real loop, meter, pruner,
// engine and simulator) with and without it. Compare each pair's mean. Both variants are warmed
// up first, so neither pays for compiling the code they share.
for (const window of [128000, 512000]) {
  describe(`warmfold bench workload, ${window / 1000}k window, 60 steps`, () => {
    beforeAll(async () => {
      for (let round = 0; round < 3; round++) {
        await runWorkload({ window }, { ledger: false })
        await runWorkload({ window })
      }
    })
    bench(
      'without the cache ledger',
      async () => {
        await runWorkload({ window }, { ledger: false })
      },
      { iterations: 15, time: 0, warmupIterations: 2 },
    )
    bench(
      'with the cache ledger',
      async () => {
        await runWorkload({ window })
      },
      { iterations: 15, time: 0, warmupIterations: 2 },
    )
  })
}
