import type { ArtifactClass } from './artifact.ts'
import { ARTIFACT_CLASSES } from './artifact.ts'

/** How a class ranks in the dropped list: its place in {@link ARTIFACT_CLASSES}. */
const CLASS_RANK = new Map(ARTIFACT_CLASSES.map((artifactClass, index) => [artifactClass, index]))

/**
 * The ranking of dropped items: within a class, what the user typed first, then the newest
 * (highest last seq), then the most mentioned, then the earliest first mention, then by text; the
 * list takes the best remaining item of each class in class order (user-message, error, command,
 * path, identifier, url, number), round after round, so one class cannot crowd out the others.
 */
export function rankRoundRobin<T extends { readonly class: ArtifactClass }>(
  items: readonly T[],
  compare: (a: T, b: T) => number,
  limit: number,
): T[] {
  const byClass = new Map<ArtifactClass, T[]>()
  for (const item of items) {
    const list = byClass.get(item.class)
    if (list) list.push(item)
    else byClass.set(item.class, [item])
  }
  const queues = [...byClass.entries()]
    .toSorted((a, b) => CLASS_RANK.get(a[0])! - CLASS_RANK.get(b[0])!)
    .map(([, list]) => list.toSorted(compare))
  const ranked: T[] = []
  for (let round = 0; ranked.length < limit; round++) {
    let added = false
    for (const queue of queues) {
      if (round < queue.length && ranked.length < limit) {
        ranked.push(queue[round]!)
        added = true
      }
    }
    if (!added) break
  }
  return ranked
}
