import { afterAll, bench, describe } from 'vitest'
import { DEFAULT_STRATEGIES, runWorkload } from '../src/index.ts'

afterAll(() => {
  // Peak resident memory of the whole bench process (KiB → MiB), printed for the issue note.
  console.log(`peak RSS: ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB`)
})

describe('scripted workload at a 512k window, 60 steps', () => {
  for (const strategy of DEFAULT_STRATEGIES) {
    bench(
      `${strategy}`,
      async () => {
        await runWorkload({ window: 512000, strategy })
      },
      { iterations: 5, time: 0, warmupIterations: 1 },
    )
  }
})
