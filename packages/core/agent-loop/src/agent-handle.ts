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
   * The last conversation request of this agent the provider answered in this process, with the
   * surface nodes it was derived from: what a fork and a warm summary call replay (its cache entry
   * exists). `undefined` before the first answer (after a resume, until a turn ran).
   */
  readonly lastRequest: AgentRequest | undefined
  /**
   * The latest failure, or `undefined`: a turn that ended with reason `error` (code
   * `TURN_FAILED`) or a failure the session log could not record (code `LOG_FAILED`). It is
   * never cleared, and it is set before `whenIdle()` and the failed turn's `followup` promise
   * resolve, so a host checks it after awaiting either.
   */
  readonly lastError: AgentError | undefined
  /**
   * Queues a user message; it starts a turn as soon as the agent is free. The promise resolves
   * (it never rejects) when that turn has ended and its `turn/end` is flushed, with the turn's
   * reason, steps and, on failure, `errorCode`, `error` and `cause`; or with reason `unsent`
   * when the message never started a turn.
   */
  followup(message: string | Message): Promise<TurnResult>
  /** Resolves when no turn or maintenance task runs and nothing is queued. Never rejects. */
  whenIdle(): Promise<void>
  /**
   * Aborts the running turn (it ends with reason `aborted`; partial output is logged as
   * `assistant/partial`) and removes queued followups, which are returned unsent.
   */
  abort(reason?: unknown): Message[]
  /**
   * Runs `task` while the agent is idle; followups queued meanwhile wait until it finishes
   * (with `yieldToFollowup`, a followup first aborts the task's signal).
   * @throws AgentError `BUSY` (as a rejected promise) when a turn or another task is running.
   */
  runMaintenance<T>(task: (signal: AbortSignal) => Promise<T>, options?: MaintenanceOptions): Promise<T>
  /**
   * Starts a child agent in its own session whose first request is this agent's last request,
   * byte for byte (the logged header: system, tools in order, effort, temperature, stop,
   * `maxTokens`; the messages as sent; the same prompt cache key through `cacheSessionId`), plus
   * one trailing task message, so it reads the cache entry that request wrote. The child then
   * runs its own turn, with its own tool calls, in its own session; it resolves with the child's
   * final answer, so a host can offer forking as a tool.
   *
   * The parent's log gets `agent/fork-start` (flushed before the child exists) and one
   * `agent/fork-end`; the child's starts with `agent/fork`. The child session is closed when its
   * turn has ended; when the store refuses to write it, it is deleted and the fork fails. Callable
   * while a turn runs (from a tool) as long as the last request has been answered.
   * @throws TypeError naming a bad option; AgentError `FORK_REFUSED` when no request of this
   *   agent was answered in this process, the last one is still in flight or failed, or the
   *   child session exists (or a fork of this agent into it is under way); `LOG_FAILED` when the
   *   parent's log refuses the fork's events.
   */
  fork(options: ForkOptions): Promise<ForkResult>
}
