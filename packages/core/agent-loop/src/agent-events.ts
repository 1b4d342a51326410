import type { ContentBlock, LlmErrorCode } from '@warmfold/llm'
import type { RequestHeader } from '@warmfold/session'
import type { AgentError } from './agent-error.ts'
import type { AgentHandle, AgentStatus } from './agent-handle.ts'
import type { TurnEndReason } from './turn-result.ts'

type Awaitable<T> = T | Promise<T>

declare module '@warmfold/session' {
  interface SessionEventMap {
    /** A turn began (one queued user message starts one turn). */
    'turn/start': { turn: number }
    /** A turn ended; `errorCode`/`error` explain a failed request. */
    'turn/end': {
      turn: number
      reason: TurnEndReason
      steps: number
      errorCode?: LlmErrorCode | string
      error?: string
    }
    /**
     * Output received before an abort. Log-only: never a surface node, so the next request still
     * extends the last complete one.
     */
    'assistant/partial': { turn: number; step: number; content: ContentBlock[]; reason: 'aborted' }
    /**
     * First event of a fork's session: the parent it was forked from (`parentSeq`: the parent's
     * last surface node the replayed request held), the header it sends unchanged, the session
     * whose prompt cache it reads (`cacheSessionId`), the tools it may call (absent: all) and
     * `cacheTtl: 'short'` when its requests ask for the short cache tier.
     * The replayed messages follow as ordinary surface events, in the same unit.
     */
    'agent/fork': {
      parentSessionId: string
      parentSeq: number
      header: RequestHeader
      cacheSessionId: string
      tools?: string[]
      cacheTtl?: 'short'
    }
    /** In the parent's log: a fork was started; one `agent/fork-end` follows for it, never two. */
    'agent/fork-start': { childSessionId: string; parentSeq: number }
    /**
     * In the parent's log: what became of a fork. `finished` carries the child's answer, `failed`
     * the reason (logged on resume as failed when the process ended before the child's turn did).
     */
    'agent/fork-end': { childSessionId: string; reason: 'finished' | 'failed'; answer?: string; error?: string }
  }
}

/** Context of the `agent/pre-step` hook. */
export interface PreStepContext {
  readonly agent: AgentHandle
  readonly turn: number
  readonly step: number
  readonly signal: AbortSignal
}

/** Context of the `agent/request` hook; a listener may replace `header`. */
export interface RequestHookContext extends Omit<PreStepContext, 'signal'> {
  /** The header the step will send; assign a new one to change it. */
  header: RequestHeader
}

/** Context of the `agent/request-error` hook. */
export interface RequestErrorContext extends PreStepContext {
  /** The failure, usually an `LlmError` (check with `LlmError.isInstance`). */
  readonly error: unknown
  /** Retries already granted for this step (a handler may grant one). */
  readonly retries: number
}

/** Context of the `agent/resume` hook. */
export interface ResumeContext {
  readonly agent: AgentHandle
}

/** What an `agent/request-error` handler may answer. */
export type RequestErrorAction = { readonly retry: true }

declare module '@cordisjs/core' {
  interface Events {
    /**
     * Before every step's request is built. Listeners run in order and are awaited, so they may
     * do async work (compaction pressure runs here) that changes the session first.
     */
    'agent/pre-step'(context: PreStepContext): Awaitable<void>
    /** After the header is built from the agent options; listeners may replace `context.header`. */
    'agent/request'(context: RequestHookContext): Awaitable<void>
    /**
     * A conversation request failed. The first listener that returns `{ retry: true }` gets the
     * step rebuilt (pre-step hook included) and sent again, up to the agent's `maxStepRetries`
     * per step; `context.retries` counts the retries already granted. Otherwise the turn ends
     * with the error's code.
     */
    'agent/request-error'(context: RequestErrorContext): Awaitable<RequestErrorAction | void | undefined>
    /** An agent changed status. */
    'agent/status'(agent: AgentHandle, status: AgentStatus): void
    /**
     * An agent was created on a session that already has events (a resume), before the loop
     * closes a turn the previous process left open. Listeners are awaited in order and may
     * append (compaction closes a bracket a crash left open here, so it ends before the turn).
     */
    'agent/resume'(context: ResumeContext): Awaitable<void>
    /**
     * A turn failed (`TURN_FAILED`: it ended with reason `error`, e.g. a 401, a missing adapter or
     * service; the next queued followup still runs), or the agent could not log or persist what
     * it had to (`LOG_FAILED`: an append was refused or a flush failed; also reported as an
     * `internal/warning`, the agent is idle again and its queue is handed back on
     * `error.unsent`). The same error is kept on `agent.lastError`.
     */
    'agent/error'(agent: AgentHandle, error: AgentError): void
  }
}
