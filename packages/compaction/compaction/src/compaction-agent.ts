import type { Session } from '@warmfold/session'

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
