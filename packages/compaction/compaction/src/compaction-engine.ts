import type { Context } from '@cordisjs/core'
import { Service } from '@cordisjs/core'
import type { Session } from '@warmfold/session'
import type { CompactionAgent, ManualCompactionAgent } from './compaction-agent.ts'
import type { CompactionResult, CompactionTrigger } from './compaction-events.ts'
import { DEFAULT_MAX_OVERFLOW_RETRIES, installCompactionTriggers, surfaceCharacters } from './compaction-triggers.ts'

declare module '@cordisjs/core' {
  interface Context {
    compaction: CompactionEngine
  }
}

/**
 * The `ctx.compaction` contract. One engine is mounted per Context; hosts, commands and the
 * agent loop talk to whichever is mounted through these three methods and the compaction
 * events in the session log.
 *
 * Every engine keeps the cache rules: the summary call replays the conversation's routed
 * envelope and messages (C2, C3), rewrites wait for a break (C4), and every surface rewrite is
 * preceded by its pricing event (`compaction/summary` or `compaction/prune`, C5).
 *
 * Triggering is part of the contract: the constructor wires the engine to the agent loop (see
 * {@link installCompactionTriggers}) unless {@link CompactionEngine.autoTrigger} says otherwise.
 */
export abstract class CompactionEngine<C = unknown> extends Service<C> {
  static [Service.provide] = 'compaction'
  static [Service.immediate]: boolean = true
  /**
   * Whether the constructor wires the automatic triggers. A subclass that triggers itself (or
   * never) sets `static autoTrigger = false`; a config object with `auto: false` turns them
   * off for one mount.
   */
  static autoTrigger: boolean = true

  constructor(ctx: Context, config: C) {
    super(ctx, config)
    const engineClass = new.target as unknown as { autoTrigger?: unknown }
    if (engineClass.autoTrigger !== false && (config as { auto?: unknown } | undefined)?.auto !== false) {
      // Closures, so an override is read at event time, after the subclass has constructed.
      installCompactionTriggers(ctx, this, {
        maxOverflowRetries: (agent) => this.maxOverflowRetries(agent),
        surfaceSize: (session) => this.surfaceSize(session),
      })
    }
  }

  /**
   * Retries of one step the automatic triggers may grant after `CONTEXT_WINDOW_EXCEEDED`, each
   * only after a recovery that really shrank the surface, until the agent goes idle or answers
   * again; `0` turns overflow recovery off. Default 1. Read at every overflow.
   */
  protected maxOverflowRetries(_agent: CompactionAgent): number {
    return DEFAULT_MAX_OVERFLOW_RETRIES
  }

  /**
   * The size of the surface the overflow trigger compares before and after a recovery, in any
   * unit that grows with the prompt. Default: characters of the messages' canonical prompt view.
   */
  protected surfaceSize(session: Session): number {
    return surfaceCharacters(session)
  }

  /**
   * The automatic policy. `pressure`: compact when the measured request is above the threshold.
   * `context-overflow`: the provider rejected the request as too long; reduce it even below the
   * threshold. Returns the committed checkpoint, or `null` when nothing was (or could safely be)
   * summarized; a prune-only pass also returns `null`.
   */
  abstract compactIfNeeded(
    agent: CompactionAgent,
    trigger: CompactionTrigger,
    signal?: AbortSignal,
  ): Promise<CompactionResult | null>

  /**
   * Manual compaction of an idle agent, even below the threshold. Runs through
   * `agent.runMaintenance`. Returns `null` when there is nothing to compact.
   * @throws ManualCompactionError for expected failures (see its codes).
   */
  abstract compactNow(agent: ManualCompactionAgent, signal?: AbortSignal): Promise<CompactionResult | null>

  /**
   * Compacts surface positions `start..end` (inclusive). Both edges must be tool-pairing
   * balanced; a missing, reversed or unbalanced range is rejected.
   */
  abstract compactRegion(
    start: number,
    end: number,
    agent: CompactionAgent,
    signal?: AbortSignal,
  ): Promise<CompactionResult>
}
