// What the cache ledger adds to `warmfold bench`, measured as the bench runs: the nine default
// runs (3 windows × warmfold, legacy, cold) without and with the ledger, alternated for 8 rounds
// in one process after one warm-up round each, so machine noise hits both alike.
//   node --import tsx packages/testing/integration/bench/cache-ledger/ledger-overhead-rounds.ts
import { runWorkload } from '@warmfold/prefix-cache-testkit'

const ROUNDS = 8

async function round(ledger: boolean): Promise<number> {
  const start = performance.now()
  for (const window of [32000, 128000, 512000]) {
    for (const strategy of ['warmfold', 'legacy', 'cold'] as const)
      await runWorkload({ window, strategy }, ledger ? {} : { ledger: false })
  }
  return performance.now() - start
}

await round(false)
await round(true)
let without = 0
let withLedger = 0
const ratios: number[] = []
for (let index = 0; index < ROUNDS; index++) {
  const off = await round(false)
  const on = await round(true)
  without += off
  withLedger += on
  ratios.push(on / off - 1)
}
const sorted = ratios.toSorted((left, right) => left - right)
const median = ((sorted[ROUNDS / 2 - 1] as number) + (sorted[ROUNDS / 2] as number)) / 2
console.log(
  `mean per round: ${(without / ROUNDS).toFixed(0)} ms without the ledger, ${(withLedger / ROUNDS).toFixed(0)} ms with it: +${((withLedger / without - 1) * 100).toFixed(1)} % (median round +${(median * 100).toFixed(1)} %)`,
)
