import { codePointLength } from './code-point-length.ts'
import { PRUNE_MARKER } from './prune-marker.ts'

/** The code-point budgets of one pruning pass. All values are Unicode code points. */
export interface PruneBudget {
  /** A result whose text blocks together hold at most this many code points is left alone. Integer `>= 1`. */
  readonly thresholdChars: number
  /** Code points kept from the start of an over-budget result. Integer `>= 0`. */
  readonly headChars: number
  /** Code points kept from the end of an over-budget result. Integer `>= 0`. */
  readonly tailChars: number
}

/** The default budgets: 8192 / 4096 / 1024 code points. */
export const DEFAULT_PRUNE_BUDGET: PruneBudget = Object.freeze({
  thresholdChars: 8192,
  headChars: 4096,
  tailChars: 1024,
})

/** Length of {@link PRUNE_MARKER} in code points. */
export const PRUNE_MARKER_LENGTH = codePointLength(PRUNE_MARKER)

/**
 * Checks that `budget` is usable and throws a `RangeError` naming the offending keys and values
 * when it is not:
 * - `thresholdChars` is an integer `>= 1`, `headChars` and `tailChars` integers `>= 0`;
 * - `headChars + PRUNE_MARKER_LENGTH + tailChars <= thresholdChars`.
 *
 * The second rule is what makes pruning safe to repeat: a pruned result holds exactly
 * head + marker + tail code points, so it is never over budget again (a second pass is a
 * no-op) and always strictly shorter than the original (which was over the threshold).
 */
export function checkPruneBudget(budget: PruneBudget): void {
  const { thresholdChars, headChars, tailChars } = budget
  if (!Number.isInteger(thresholdChars) || thresholdChars < 1)
    throw new RangeError(`thresholdChars must be an integer >= 1, got ${String(thresholdChars)}`)
  if (!Number.isInteger(headChars) || headChars < 0)
    throw new RangeError(`headChars must be an integer >= 0, got ${String(headChars)}`)
  if (!Number.isInteger(tailChars) || tailChars < 0)
    throw new RangeError(`tailChars must be an integer >= 0, got ${String(tailChars)}`)
  const pruned = headChars + PRUNE_MARKER_LENGTH + tailChars
  if (pruned > thresholdChars) {
    throw new RangeError(
      `headChars (${headChars}) + PRUNE_MARKER (${PRUNE_MARKER_LENGTH} code points) + tailChars (${tailChars}) = ` +
        `${pruned} must be <= thresholdChars (${thresholdChars}), or a pruned result would still be over the ` +
        `threshold`,
    )
  }
}
