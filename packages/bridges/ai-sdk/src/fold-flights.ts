import type { FoldOutcome } from './fold-prompt.ts'

/** A fold in flight: the prompt its summary call replays, by its prefix digest and message count. */
export interface FoldFlight {
  readonly digest: string
  readonly length: number
  readonly trigger: 'pressure' | 'background'
  /** Settles with the fold's outcome, or `undefined` when it threw (never rejects: its owner sees the error). */
  readonly settled: Promise<FoldOutcome | undefined>
}

/**
 * The folds in flight of one middleware, at most one per conversation: a fold is keyed by the
 * prompt its summary call replays, and a call whose prompt starts with that prompt belongs to the
 * same conversation (a later step, or a branch the host runs beside it). Such a call does not
 * start a fold of its own while one is in flight: it waits for it and takes its checkpoint.
 */
export class FoldFlights {
  private readonly flights: FoldFlight[] = []

  /** The fold in flight of the conversation whose prompt has these prefix digests (`prefixDigests`). */
  find(digests: readonly string[]): FoldFlight | undefined {
    return this.flights.find((flight) => digests[flight.length] === flight.digest)
  }

  /** Tracks `work` as the flight of the prompt with these digests until it settles. */
  track(digests: readonly string[], trigger: FoldFlight['trigger'], work: Promise<FoldOutcome>): FoldFlight {
    const length = digests.length - 1
    const settled = work.catch(() => undefined).finally(() => this.flights.splice(this.flights.indexOf(flight), 1))
    const flight: FoldFlight = { digest: digests[length] as string, length, trigger, settled }
    this.flights.push(flight)
    return flight
  }
}

/**
 * `work`, or the abort of `signal` (rejecting with its reason), whichever comes first: a call
 * waiting for another call's fold stays abortable by its own host.
 */
export function unlessAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work
  if (signal.aborted) return Promise.reject(signal.reason)
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason)
    signal.addEventListener('abort', abort, { once: true })
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort))
  })
}
