import { bench, describe } from 'vitest'
// The test kit depends on this package (it mounts the ledger in every run), so a devDependency
// on it would make a workspace cycle; this bench reaches the kit's source directly instead.
import { runWorkload } from '../../../testing/prefix-cache-testkit/src/index.ts'

// What the ledger adds to `warmfold bench`: the same scripted run (real loop, meter, pruner,
// engine and simulator) with and without it. Compare each pair's mean.
for (const window of [128000, 512000]) {
  describe(`warmfold bench workload, ${window / 1000}k window, 60 steps`, () => {
    bench('with the cache ledger', async () => {
      await runWorkload({ window })
    }, { iterations: 12, time: 0, warmupIterations: 2 })
    bench('without the cache ledger', async () => {
      await runWorkload({ window }, { ledger: false })
    }, { iterations: 12, time: 0, warmupIterations: 2 })
  })
}
