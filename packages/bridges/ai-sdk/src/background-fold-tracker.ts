import { REAL_TIME_CLOCK } from '@warmfold/compaction-basic'
import { softThreshold, waitOn } from '@warmfold/compaction-basic/engine-parts'
import type { FoldRecord } from './fold-store.ts'
import type { FoldedCall } from './fold-prompt.ts'

/** A prompt, by the digest of its messages after the leading system ones and their count. */
interface PromptKey {
  readonly digest: string
  readonly length: number
}

/** A background fold in flight: the prompt it started from (later calls of that conversation start with it). */
interface InFlight extends PromptKey {
  done: Promise<void>
}

/**
 * The background folds of one middleware, as `WarmfoldMiddlewareOptions.background` describes
 * them (waits go through the engine's clock). A refused background fold is not started again for
 * its conversation (the threshold tries once more anyway).
 */
export class BackgroundFoldTracker {
  private readonly inflight: InFlight[] = []
  /** Records committed by background folds and not yet applied to a call. */
  private readonly landing = new Set<FoldRecord>()
  /** Prompts whose background fold was refused: their conversation starts no other one until the threshold. */
  private readonly refused: PromptKey[] = []

  constructor(readonly settings: { readonly startRatio: number; readonly maxWaitMs: number }) {}

  /** The fold in flight of the conversation whose prompt has these digests. */
  inFlight(digests: readonly string[]): InFlight | undefined {
    return this.inflight.find((entry) => startsWith(digests, entry))
  }

  /** Waits for `fold` to settle, up to `maxWaitMs`. */
  async wait(fold: InFlight): Promise<void> {
    await waitOn(REAL_TIME_CLOCK, fold.done, this.settings.maxWaitMs)
  }

  /** Whether a background fold's record is among `applied` (this call is its logged rewrite); forgets it. */
  landed(applied: readonly FoldRecord[]): boolean {
    return applied.filter((record) => this.landing.delete(record)).length > 0
  }

  /** Whether a call of `estimated` tokens and these digests may start a background fold (none in flight for it). */
  mayStart(estimated: number, thresholdTokens: number, digests: readonly string[]): boolean {
    return (
      // The engine's soft threshold S (a fixed ratio: the middleware has no session pace for `adaptive`).
      estimated >= softThreshold(thresholdTokens, this.settings.startRatio, undefined) &&
      !this.refused.some((entry) => startsWith(digests, entry))
    )
  }

  /**
   * Runs `fold` beside the conversation for the prompt with these digests: a committed record
   * waits to land, a refusal marks the prompt (a refused summary would be refused again on the
   * next step: one paid call per fold is enough), a failure goes to `failed`.
   */
  start(
    digests: readonly string[],
    fold: () => Promise<FoldedCall | undefined>,
    failed: (error: unknown) => void,
  ): void {
    const entry: InFlight = { digest: digests.at(-1) as string, length: digests.length - 1, done: Promise.resolve() }
    entry.done = fold()
      .then((folded) => {
        if (folded) this.landing.add(folded.record)
        else this.refused.push({ digest: entry.digest, length: entry.length })
      }, failed)
      .finally(() => this.inflight.splice(this.inflight.indexOf(entry), 1))
    this.inflight.push(entry)
  }
}

function startsWith(digests: readonly string[], key: PromptKey): boolean {
  return digests[key.length] === key.digest
}
