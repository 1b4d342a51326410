import type { Session } from '@warmfold/session'
import type { BackgroundFold } from '../fold/background-fold.ts'
import { SessionCompactionState } from '../session-compaction-state.ts'

/**
 * The background folds one engine has open (summary call running, or summary in hand and not
 * yet swapped in), so unloading the engine can throw them away: each one's summary call is
 * aborted (the abort reaches the adapter's HTTP request, so nothing keeps the process alive),
 * its bracket is closed with `discarded: { reason: 'unloaded' }` (its calls on `attempts`, so
 * the log stays well-formed and priced), and nothing of it is committed afterwards.
 */
export class FoldsInFlight {
  private readonly folds = new Set<BackgroundFold>()
  private unloadedValue = false

  /** The engine was unloaded: no fold starts, settles into a swap or flushes any more. */
  get unloaded(): boolean {
    return this.unloadedValue
  }

  /** Tracks `fold` until it closes. */
  add(fold: BackgroundFold): void {
    for (const known of this.folds) if (known.status === 'closed') this.folds.delete(known)
    this.folds.add(fold)
  }

  /**
   * Discards every open fold (`unloaded`) and hands each session whose log got a `compaction/end`
   * to `flush`. A session already closed (its store unloaded first, which closes its sessions and
   * so discarded the fold as `closed`) takes no append and is skipped.
   */
  unload(flush: (session: Session) => void): void {
    this.unloadedValue = true
    for (const fold of this.folds) {
      if (fold.status === 'closed') continue
      const session = fold.session
      fold.discardNow(
        'unloaded',
        `the compaction engine was unloaded (its plugin disposed or its context stopped) before the fold of session ` +
          `${session.id} was swapped in`,
      )
      const state = SessionCompactionState.of(session)
      if (state.background === fold) state.background = undefined
      if (!session.isClosed) flush(session)
    }
    this.folds.clear()
  }
}
