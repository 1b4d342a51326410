import { SessionError } from '@warmfold/session'
import type { ContractChild } from './contract-process.ts'

/**
 * What a crashed writer's takeover may take beyond the store's own `takeoverMs` on a busy
 * machine (a lease renewal in flight, two vitest workers and child processes on 2 cores). Only a
 * bound for a wait that fails loudly, never a measured duration.
 */
const TAKEOVER_MARGIN_MS = 15_000

const pause = (ms: number) => new Promise((done) => setTimeout(done, ms))

/**
 * Runs `attempt` again while it fails with `LOCKED`, for up to `takeoverMs` plus a margin: the
 * time a store gives a crashed writer's lease. A store that frees a dead writer's sessions at
 * once (`takeoverMs` 0) gets the margin only.
 * @throws the last `LOCKED` error, its message prefixed with how long it waited
 */
export async function retryWhileLocked<T>(attempt: () => Promise<T>, takeoverMs = 0): Promise<T> {
  const deadline = Date.now() + takeoverMs + TAKEOVER_MARGIN_MS
  for (;;) {
    try {
      return await attempt()
    } catch (error) {
      if (!SessionError.isInstance(error) || error.code !== 'LOCKED') throw error
      if (Date.now() > deadline)
        throw new SessionError(
          'LOCKED',
          `still LOCKED ${takeoverMs + TAKEOVER_MARGIN_MS} ms after the holder was killed: ${error.message}`,
          { cause: error },
        )
      await pause(20)
    }
  }
}

/**
 * Waits until `inProgress()` says a write transaction is open while `writer` floods a flush,
 * then stops the writer with SIGSTOP and asks again after a moment: a `true` then means the
 * writer is frozen inside its uncommitted transaction, so a kill lands there. `false` when the
 * flush committed first (the writer said `flushed`, or the transaction was gone once the writer
 * was stopped); the caller tries again on a new session.
 */
export async function stopInsideTransaction(
  writer: ContractChild,
  inProgress: () => Promise<boolean>,
): Promise<boolean> {
  const writerReplied = { now: false }
  // The writer's reply to its flush (`flushed`, or an error) if it comes first; the kill later
  // rejects this wait, which is expected.
  writer.next().then(
    () => void (writerReplied.now = true),
    () => void (writerReplied.now = true),
  )
  while (!writerReplied.now) {
    if (await inProgress()) {
      writer.process.kill('SIGSTOP')
      // A COMMIT the writer sent just before it stopped is taken by the server within this pause.
      await pause(50)
      return !writerReplied.now && (await inProgress())
    }
    await pause(2)
  }
  return false
}
