import type { Context } from '@cordisjs/core'
import type { CompactionAgent, CompactionResult, DiscardedFold, FoldTiming } from '@warmfold/compaction'
import type { RequestHeader, Session } from '@warmfold/session'
import { asRefusal, CompactionRefusal } from '../compaction-refusal.ts'
import type { TransactionInput } from './transaction-input.ts'
import { FoldTransaction } from './fold-transaction.ts'
import type { EngineClock } from '../engine-clock.ts'
import type { SummaryOutcome } from './summarize.ts'

/** Where a background fold is: its summary call running, its summary in hand, or over. */
export type BackgroundFoldStatus = 'pending' | 'ready' | 'closed'

/** What a background fold starts from. */
export interface BackgroundFoldInput {
  readonly agent: CompactionAgent
  /** The transaction input: region, sized summary request, budget, stability `selected-span`. */
  readonly transaction: Omit<TransactionInput, 'signal'>
  /** The request header the last sent request was built with (the route it must still have at the swap). */
  readonly header: RequestHeader
  /** Seqs of every surface node the last sent request held: nothing among them may be rewritten meanwhile. */
  readonly snapshotSeqs: readonly number[]
  readonly clock: EngineClock
}

/**
 * One background fold: `compaction/start` with trigger `background` (or `idle`), then the
 * summary call of the last sent request's head, made beside the conversation with its own abort
 * signal (a new user message does not cancel it). Once the summary is in hand it waits for the
 * next request boundary, where the engine validates and swaps it in ({@link commit}), or throws
 * it away with its cost on the log ({@link discard}). The bracket stays open meanwhile; a crash
 * leaves it open, and a resume closes it as interrupted: a finished summary that was not swapped
 * in is dropped (its call is on the log as a `cache/observation` when the ledger is mounted).
 */
export class BackgroundFold {
  readonly transaction: FoldTransaction
  readonly startedAt: number
  readonly snapshotSeqs: ReadonlySet<number>
  /** Resolves when the summary call has settled (the summary is in hand, or the fold closed). */
  readonly settled: Promise<void>
  private statusValue: BackgroundFoldStatus = 'pending'
  private outcomeValue?: SummaryOutcome
  private readyAt?: number
  private waited = 0
  private atThreshold: FoldTiming['statusAtThreshold'] = 'none'
  private readonly controller = new AbortController()
  /** Why the fold is being thrown away, once a cancel came in while its call ran. */
  private discardPending?: DiscardedFold
  private discardedValue?: DiscardedFold
  private refusalValue?: CompactionRefusal

  constructor(
    ctx: Context,
    readonly input: BackgroundFoldInput,
  ) {
    this.transaction = FoldTransaction.open(ctx, { ...input.transaction, signal: this.controller.signal })
    this.startedAt = input.clock.now()
    this.snapshotSeqs = new Set(input.snapshotSeqs)
    this.settled = this.run()
  }

  get status(): BackgroundFoldStatus {
    return this.statusValue
  }

  get session(): Session {
    return this.input.agent.session
  }

  get compactionId(): string {
    return this.transaction.compactionId
  }

  /** The refusal of a summary call that failed or was refused, once it was. */
  get refusal(): CompactionRefusal | undefined {
    return this.refusalValue
  }

  /** Why the fold was thrown away, once it was. */
  get discarded(): DiscardedFold | undefined {
    return this.discardedValue
  }

  /** The summary, once in hand. */
  get outcome(): SummaryOutcome | undefined {
    return this.outcomeValue
  }

  /**
   * Records that the conversation reached the pressure threshold while this fold existed: the
   * first time decides `statusAtThreshold` (`pending` or `ready`).
   */
  reachedThreshold(): void {
    if (this.atThreshold === 'none') this.atThreshold = this.statusValue === 'ready' ? 'ready' : 'pending'
  }

  /** Adds what the conversation waited for this fold. */
  addWait(ms: number): void {
    this.waited += Math.max(0, ms)
  }

  /** The fold's timing; `postSwapPrefillTokens` is known only at the swap. */
  timing(postSwapPrefillTokens: number): FoldTiming {
    const readyAfterMs = (this.readyAt ?? this.input.clock.now()) - this.startedAt
    return {
      mode: 'background',
      startedAt: this.startedAt,
      readyAfterMs,
      statusAtThreshold: this.atThreshold,
      waitedMs: this.waited,
      stallSavedMs: Math.max(0, readyAfterMs - this.waited),
      postSwapPrefillTokens,
    }
  }

  /**
   * Swaps the summary in: the transaction's checks and commit (the region must be unchanged;
   * every node after it stays, in order). The caller has validated route and staleness.
   * @throws CompactionRefusal when the checks fail (the fold is then discarded by the caller).
   */
  async commit(postSwapPrefillTokens: () => number): Promise<CompactionResult> {
    const outcome = this.outcomeValue
    if (this.statusValue !== 'ready' || !outcome)
      throw new Error(`background fold ${this.compactionId} has no summary to commit (${this.statusValue})`)
    const result = await this.transaction.commit(outcome, { timing: () => this.timing(postSwapPrefillTokens()) })
    this.statusValue = 'closed'
    return result
  }

  /**
   * Throws the fold away: aborts its call if it still runs (the bracket closes when the call
   * settles) or closes the bracket now, with `compaction/end { error, discarded, attempts }`.
   * Resolves once the bracket is closed. A no-op on a closed fold.
   */
  async discard(reason: DiscardedFold['reason'], detail: string): Promise<void> {
    if (this.statusValue === 'closed') return
    if (this.statusValue === 'pending') {
      this.discardPending ??= { reason, detail }
      this.controller.abort(new Error(`background fold discarded (${reason}): ${detail}`))
      await this.settled
      return
    }
    this.close({ reason, detail })
  }

  /**
   * Throws the fold away at once, its call included: aborts a call still running and closes the
   * bracket now (the call in flight is on `attempts` as `aborted`), for a session that is being
   * closed and takes no append once its close has begun. A no-op on a closed fold.
   */
  discardNow(reason: DiscardedFold['reason'], detail: string): void {
    if (this.statusValue === 'closed') return
    const discarded = this.discardPending ?? { reason, detail }
    this.discardPending = discarded
    if (this.statusValue === 'pending')
      this.controller.abort(new Error(`background fold discarded (${reason}): ${detail}`))
    this.close(discarded)
  }

  /** The summary call; a settled call either leaves the fold ready or closes it. */
  private async run(): Promise<void> {
    try {
      const outcome = await this.transaction.summarize(this.controller.signal)
      this.readyAt = this.input.clock.now()
      if (this.discardPending) return this.close(this.discardPending)
      this.outcomeValue = outcome
      this.statusValue = 'ready'
    } catch (error) {
      this.readyAt = this.input.clock.now()
      const refusal = asRefusal(error, 'summary', 'background summary call failed: ')
      const discarded = this.discardPending ?? {
        reason: refusal.code === 'summary' && refusal.llmCode === undefined ? 'refused' : 'failed',
        detail: refusal.message,
      }
      this.close(discarded, refusal)
    }
  }

  private close(discarded: DiscardedFold, refusal?: CompactionRefusal): void {
    if (this.statusValue === 'closed') return
    this.statusValue = 'closed'
    this.discardedValue = discarded
    this.refusalValue = refusal
    const message = `background fold discarded (${discarded.reason}): ${discarded.detail}`
    // Without the call's refusal, the transaction logs the calls it made so far.
    this.transaction.abandon(
      new CompactionRefusal(refusal?.code ?? 'changed', message, { attempts: refusal?.attempts }),
      { discarded, timing: this.timing(0) },
    )
  }
}
