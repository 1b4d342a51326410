import { hitRatio, runWorkload } from '@warmfold/prefix-cache-testkit'

export async function main() {
  const run = await runWorkload({ window: 128000, strategy: 'warmfold' })
  return {
    hitRatios: run.summaryCalls.map(hitRatio), // one ratio per summary call
    uncachedTokens: run.totals.uncachedTokens, // the whole session, conversation and summaries
    silentRewrites: run.silentRewrites, // 0 when rule C1 holds
    completed: run.completed,
  }
}
