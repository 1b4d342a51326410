import { REAL_TIME_CLOCK } from '@warmfold/compaction-basic'
import { softThreshold, waitOn } from '@warmfold/compaction-basic/engine-parts'
import type { FoldFlight, FoldFlights } from './fold-flights.ts'
import type { FoldRecord } from './fold-store.ts'
import type { FoldOutcome } from './fold-prompt.ts'

/** A prompt, by the digest of its messages and their count. */
interface PromptKey {
  readonly digest: string
  readonly length: number
}

/**
 * The background folds of one middleware, as `WarmfoldMiddlewareOptions.background` describes
 * them (waits go through the engine's clock; the folds fly among the middleware's `FoldFlights`).
 * A refused or failed background fold is not started again for its conversation (the threshold
 * tries once more anyway).
 */
export class BackgroundFoldTracker {
  /** Records committed by background folds and not yet applied to a call. */
  private readonly landing = new Set<FoldRecord>()
  /** Prompts whose background fold was refused: their conversation starts no other one until the threshold. */
  private readonly refused: PromptKey[] = []

  constructor(readonly settings: { readonly startRatio: number; readonly maxWaitMs: number }) {}

  /** Waits for `flight` to settle, up to `maxWaitMs`. */
  async wait(flight: FoldFlight): Promise<void> {
    await waitOn(REAL_TIME_CLOCK, flight.settled, this.settings.maxWaitMs)
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
      !this.refused.some((entry) => digests[entry.length] === entry.digest)
    )
  }

  /**
   * Runs `fold` beside the conversation as the flight of `replayed` (the prompt its summary call
   * replays); `digests` are the starting call's. A committed record waits to land, a refusal
   * marks the starting prompt (a refused summary would be refused again on the next step: one
   * paid call per fold is enough), a failure goes to `failed` and marks it too.
   */
  start(
    flights: FoldFlights,
    replayed: readonly string[],
    digests: readonly string[],
    fold: () => Promise<FoldOutcome>,
    failed: (error: unknown) => void,
  ): void {
    const key: PromptKey = { digest: digests.at(-1) as string, length: digests.length - 1 }
    const work = fold()
    flights.track(replayed, 'background', work)
    work.then(
      (outcome) => {
        if ('record' in outcome) this.landing.add(outcome.record)
        else this.refused.push(key)
      },
      (error: unknown) => {
        this.refused.push(key)
        failed(error)
      },
    )
  }
}
