import { checkpointCompactionId, isCheckpointMessage } from '@warmfold/compaction'
import type { Session, SessionEvent } from '@warmfold/session'
import type { BackgroundFold } from './fold/background-fold.ts'
import { isForkSession } from './fold/replayable-request.ts'

/** A compaction bracket that is open at the scanned position. */
interface OpenCompaction {
  readonly compactionId: string
  readonly turn: number | null
  summarySeq?: number
  /** Seq of its checkpoint `user/message` (the replace), once logged: the compaction committed. */
  checkpointSeq?: number
}

/** Where a failed attempt left the session; no new attempt until this changes. */
interface BackOff {
  readonly turn: number | null
  /** `surface.replaceGeneration` after the attempt: a later replace means the surface shrank. */
  readonly replaceGeneration: number
}

/**
 * Which attempt backs off: a failed pressure fold stops every automatic fold; a failed background
 * fold stops only new background folds (the pressure path still folds at the threshold).
 */
export type BackOffKind = 'pressure' | 'background'

const states = new WeakMap<Session, SessionCompactionState>()

/**
 * The engine's state of one session that is not in the log: the compaction lock, the back-offs
 * of failed attempts, the open turn and bracket (scanned from the log, O(new events)), when the
 * last conversation request was built and the background fold in flight. The engine looks it up
 * once per entry point ({@link of}) and hands it to the trigger and the fold it runs.
 */
export class SessionCompactionState {
  /** The background fold of this session in this process, while its bracket is open. */
  background?: BackgroundFold
  /**
   * When this process last built a conversation request of the session, on the engine's clock (the
   * provider's TTL runs from it).
   */
  lastRequestAt?: number
  private locked = false
  private readonly backOffs: { [kind in BackOffKind]?: BackOff } = {}
  private scanned = 0
  private turn: number | null = null
  private open?: OpenCompaction

  private constructor(readonly session: Session) {}

  /** The state of `session`: one per session in this process, whichever engine asks. */
  static of(session: Session): SessionCompactionState {
    let state = states.get(session)
    if (!state) states.set(session, (state = new SessionCompactionState(session)))
    return state
  }

  /** A compaction of this session is running in this process. */
  get busy(): boolean {
    return this.locked
  }

  /** Takes the session's compaction lock: its release, or `undefined` when a compaction runs already. */
  lock(): (() => void) | undefined {
    if (this.locked) return undefined
    this.locked = true
    return () => void (this.locked = false)
  }

  get openTurn(): number | null {
    this.scan()
    return this.turn
  }

  /**
   * Records a failed attempt of `kind`: it backs off for the rest of this user turn, unless the
   * surface shrinks meanwhile (see {@link backedOff}).
   */
  backOff(kind: BackOffKind): void {
    this.backOffs[kind] = { turn: this.openTurn, replaceGeneration: this.session.surface.replaceGeneration }
  }

  /** The pressure was relieved: a later failure backs off afresh. */
  clearBackOff(): void {
    this.backOffs.pressure = undefined
  }

  /**
   * Whether the back-off of a failed attempt of `kind` still holds: it does for the rest of that
   * user turn, unless the surface shrank since (a checkpoint or prune landed, e.g. by overflow
   * recovery). So a tail that cannot be reduced costs at most one failed attempt per user turn.
   */
  backedOff(kind: BackOffKind): boolean {
    const backOff = this.backOffs[kind]
    return (
      backOff !== undefined &&
      backOff.turn === this.openTurn &&
      backOff.replaceGeneration === this.session.surface.replaceGeneration
    )
  }

  /**
   * Whether a background or idle fold may start now: none in flight, no compaction holding the
   * lock (unless the caller holds it), no pressure or background back-off, the session open and
   * not a fork's (a fork folds only when it must or is asked).
   */
  mayStartBackground(holdsLock: boolean): boolean {
    const { session } = this
    if (this.background || (this.busy && !holdsLock)) return false
    if (this.backedOff('pressure') || this.backedOff('background')) return false
    return !session.isClosed && !isForkSession(session)
  }

  /**
   * Closes a compaction bracket that a previous process left open (it ended before logging the
   * `compaction/end`: a crash, a kill, a torn last line), saying what really happened. When the
   * checkpoint had landed, the compaction committed: the end carries no `error`, only
   * `recovered: true`. Otherwise it records why no checkpoint was committed.
   *
   * @returns the closing event, or `undefined` when no bracket is open.
   */
  closeOpenCompaction(): SessionEvent<'compaction/end'> | undefined {
    this.scan()
    const open = this.open
    if (!open) return undefined
    // A background fold of this process keeps its bracket open on purpose while it runs.
    const background = this.background
    if (background && background.status !== 'closed' && background.compactionId === open.compactionId) return undefined
    const { compactionId, turn } = open
    const session = this.session
    if (open.checkpointSeq !== undefined)
      return session.append('compaction/end', { compactionId, turn, recovered: true })
    const error =
      open.summarySeq === undefined
        ? 'interrupted: the process ended before this compaction finished; no checkpoint was committed'
        : `interrupted: the process ended after the summary (seq ${open.summarySeq}) but before its checkpoint ` +
          'replaced the region; no checkpoint was committed'
    return session.append('compaction/end', { compactionId, turn, error, recovered: true })
  }

  /** Brings the turn and bracket scan up to the end of the log. */
  private scan(): void {
    const session = this.session
    for (; this.scanned < session.length; this.scanned++) {
      const event = session.eventAt(this.scanned)
      if (!event) break
      const open = this.open
      switch (event.type) {
        case 'turn/start':
          this.turn = event.data.turn
          break
        case 'turn/end':
          this.turn = null
          break
        case 'compaction/start':
          this.open = { compactionId: event.data.compactionId, turn: event.data.turn }
          break
        case 'compaction/summary':
          if (open?.compactionId === event.data.compactionId) open.summarySeq = event.seq
          break
        case 'user/message':
          if (
            open &&
            isCheckpointMessage(event.data.message) &&
            checkpointCompactionId(event.data.message) === open.compactionId
          )
            open.checkpointSeq = event.seq
          break
        case 'compaction/end':
          this.open = undefined
          break
      }
    }
  }
}
