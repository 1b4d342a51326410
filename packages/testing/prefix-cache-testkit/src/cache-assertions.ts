import type { CacheObservation } from './cache-observation.ts'

/** cachedTokens / promptTokens of one observation (0 for an empty prompt). */
export function hitRatio(observation: CacheObservation): number {
  return observation.promptTokens ? observation.cachedTokens / observation.promptTokens : 0
}

/** The tokens of one observation billed at the full input price. */
export function uncachedTokens(observation: CacheObservation): number {
  return observation.promptTokens - observation.cachedTokens
}

/** Conversation requests that broke the prefix without a logged rewrite (rule C1 violations). */
export function silentRewrites(observations: readonly CacheObservation[]): CacheObservation[] {
  const seen = new Set<string>()
  const silent: CacheObservation[] = []
  for (const observation of observations) {
    if (observation.purpose !== 'conversation' || observation.sessionId === undefined) continue
    const first = !seen.has(observation.sessionId)
    seen.add(observation.sessionId)
    if (!first && !observation.extendsPrevious && observation.rewritesSince.length === 0) silent.push(observation)
  }
  return silent
}

/**
 * Asserts rule C1 over a run: every conversation request strictly extends the previous one of
 * its session unless a durable rewrite (compaction/summary, compaction/prune, a header change)
 * was logged in between.
 * @throws Error listing each silent rewrite with its first divergence.
 */
export function assertNoSilentRewrite(
  run: { cache: { observations: readonly CacheObservation[] } } | readonly CacheObservation[],
): void {
  const silent = silentRewrites('cache' in run ? run.cache.observations : run)
  if (silent.length) {
    const lines = silent.map(
      (observation) =>
        `request ${observation.index} (session ${observation.sessionId}): diverges at ` +
        `${JSON.stringify(observation.divergence)} with no logged rewrite`,
    )
    throw new Error(`silent prefix rewrite (rule C1):\n${lines.join('\n')}`)
  }
}
