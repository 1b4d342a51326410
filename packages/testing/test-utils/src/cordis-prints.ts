// This helper exists to observe console.info (where cordis prints unhandled reports).
/* oxlint-disable no-console */
import { format } from 'node:util'

/** What {@link recordCordisPrints} saw. */
export interface CordisPrints<T> {
  readonly result: T
  /** Every line printed through `console.info` while `run` ran, formatted. */
  readonly printed: readonly string[]
}

/**
 * Runs `run` and records what was printed through `console.info` meanwhile. A cordis Context
 * with no `internal/warning` or `internal/error` listener of its own prints those reports with
 * `console.info`, so a test of code that creates its own Context (a README example) can still
 * fail on a missing inject, a bad config or a plugin that did not load. The lines are still
 * printed; `console.info` is restored afterwards.
 */
export async function recordCordisPrints<T>(run: () => Promise<T>): Promise<CordisPrints<T>> {
  const printed: string[] = []
  const original = console.info
  console.info = (...args: unknown[]) => {
    printed.push(format(...args))
    original.apply(console, args)
  }
  try {
    return { result: await run(), printed }
  } finally {
    console.info = original
  }
}
