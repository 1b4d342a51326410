import type { Message } from '@warmfold/llm'
import type { Session } from '@warmfold/session'
import type { AgentError } from './agent-error.ts'
import type { ForkOptions, ForkResult } from './fork-options.ts'
import type { TurnResult } from './turn-result.ts'
import type { AgentOptions } from './agent-options.ts'
import type { AgentRequest } from './agent-request.ts'

/** An agent's activity. */
export type AgentStatus = 'idle' | 'running' | 'maintenance'

/** Options of {@link AgentHandle.runMaintenance}. */
export interface MaintenanceOptions {
  /**
   * A followup queued while the task runs aborts the task's signal (reason: an `AgentError` with
   * code `PREEMPTED`), so work the user did not ask for (an idle compaction) gives way to new
   * input; the followup starts as soon as the task has returned. Default false: followups wait.
   */
  readonly yieldToFollowup?: boolean
}

/**
 * An agent as hook listeners and other packages see it: everything `Agent` offers a host,
 * without the loop's internals. The hook contexts carry this type rather than the `Agent`
 * class, so the hook declarations do not depend on the class whose turns fire them.
 * `Agent` implements it.
 */
export interface AgentHandle {
  /** The session this agent appends to. */
  readonly session: Session
  /** The validated, frozen options the agent was created with. */
  readonly options: AgentOptions
  /** `idle`, `running` (a turn) or `maintenance` (a `runMaintenance` task). */
  readonly status: AgentStatus
  /**
   * The last conversation request the provider answered in this process: what a fork and a warm
   * summary call replay.
   */
  readonly lastRequest: AgentRequest | undefined
  /**
   * The latest failure (a failed turn, `TURN_FAILED`, or one the log could not record, `LOG_FAILED`),
   * or `undefined`.
   */
  readonly lastError: AgentError | undefined
  /**
   * Queues a user message; it starts a turn as soon as the agent is free. Resolves (never
   * rejects) with how that turn ended, or reason `unsent` when it never started.
   */
  followup(message: string | Message): Promise<TurnResult>
  /** Resolves when no turn or maintenance task runs and nothing is queued. Never rejects. */
  whenIdle(): Promise<void>
  /** Aborts the running turn or task and returns the queued followups it removed (never logged). */
  abort(reason?: unknown): Message[]
  /**
   * Runs `task` only while the agent is idle; followups queued meanwhile wait for it.
   * Rejects with `AgentError('BUSY')` when a turn or another task is running.
   */
  runMaintenance<T>(task: (signal: AbortSignal) => Promise<T>, options?: MaintenanceOptions): Promise<T>
  /**
   * Runs a child agent whose first request is this agent's last answered request plus one task
   * message (it reads that request's cache entry) and resolves with its answer.
   * Rejects with `AgentError('FORK_REFUSED')` when there is no answered request to replay.
   */
  fork(options: ForkOptions): Promise<ForkResult>
}
