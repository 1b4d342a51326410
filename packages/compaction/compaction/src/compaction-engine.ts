import type { Context } from '@cordisjs/core'
import { Service } from '@cordisjs/core'
import type { Session } from '@warmfold/session'
import type { CompactionResult, CompactionTrigger } from './compaction-events.ts'

declare module '@cordisjs/core' {
  interface Context {
    compaction: CompactionEngine
  }
}

/** What an engine needs of an agent: its session and its route. (`Agent` from `@warmfold/agent-loop` fits.) */
export interface CompactionAgent {
  readonly session: Session
  readonly options: { readonly provider: string; readonly model: string }
}

/** An agent that can run a maintenance task while idle (manual compaction). */
export interface ManualCompactionAgent extends CompactionAgent {
  /** Runs `task` only while the agent is idle; rejects when it is busy. */
  runMaintenance<T>(task: (signal: AbortSignal) => Promise<T>): Promise<T>
}

/**
 * The `ctx.compaction` contract. One engine is mounted per Context; hosts, commands and the
 * agent loop talk to whichever is mounted through these three methods and the compaction
 * events in the session log.
 *
 * Every engine keeps the cache rules: the summary call replays the conversation's routed
 * envelope and messages (C2, C3), rewrites wait for a break (C4), and every surface rewrite is
 * preceded by its pricing event (`compaction/summary` or `compaction/prune`, C5).
 */
export abstract class CompactionEngine<C = unknown> extends Service<C> {
  static [Service.provide] = 'compaction'
  static [Service.immediate]: boolean = true

  constructor(ctx: Context, config: C) {
    super(ctx, config)
  }

  /**
   * The automatic policy. `pressure`: compact when the measured request is above the threshold.
   * `context-overflow`: the provider rejected the request as too long; reduce it even below the
   * threshold. Returns the committed checkpoint, or `null` when nothing was (or could safely be)
   * summarized; a prune-only pass also returns `null`.
   */
  abstract compactIfNeeded(agent: CompactionAgent, trigger: CompactionTrigger, signal?: AbortSignal): Promise<CompactionResult | null>

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
  abstract compactRegion(start: number, end: number, agent: CompactionAgent, signal?: AbortSignal): Promise<CompactionResult>
}
