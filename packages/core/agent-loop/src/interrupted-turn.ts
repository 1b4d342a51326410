import type { Session } from '@warmfold/session'

/** A turn whose `turn/start` is logged but whose `turn/end` is not. */
export interface InterruptedTurn {
  readonly turn: number
  /** The highest step the log shows for the turn (0 when no step was logged). */
  readonly steps: number
}

/**
 * The turn a previous process left open, or `undefined`: the last `turn/start` of the log
 * when no `turn/end` follows it. Scans back from the end, so it costs O(events of that turn).
 */
export function findInterruptedTurn(session: Session): InterruptedTurn | undefined {
  let steps = 0
  for (let seq = session.length - 1; seq >= 0; seq--) {
    const event = session.eventAt(seq)
    if (!event) break
    if (event.type === 'turn/end') return undefined
    if (event.type === 'turn/start') return { turn: event.data.turn, steps }
    const step = (event.data as { step?: unknown }).step
    if (
      (event.type === 'assistant/message' || event.type === 'assistant/partial' || event.type === 'tool/result') &&
      typeof step === 'number'
    ) {
      steps = Math.max(steps, step)
    }
  }
  return undefined
}
