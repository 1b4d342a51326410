import type { Context } from '@cordisjs/core'
import type { Message } from '@warmfold/llm'
import { createUserMessage } from '@warmfold/llm'
import type { Session } from '@warmfold/session'
import { AgentError } from './agent-error.ts'
import type { AgentStatus, MaintenanceOptions } from './agent-handle.ts'
import type { TurnResult } from './turn-result.ts'
import type { AgentOptions } from './agent-options.ts'
import type { ForkOptions, ForkResult } from './fork-options.ts'
import { validateForkOptions } from './fork-options.ts'
import { createForkSession, countForkStarts, forkRefusal, lastAnswer, sessionExists, settleOpenForks } from './fork.ts'
import { findInterruptedTurn } from './interrupted-turn.ts'
import type { ForkLineage } from './fork-lineage.ts'
import type { AgentRequest } from './agent-request.ts'
import { forkLineageOf } from './fork-lineage.ts'
import type { TurnAgent, TurnOutcome, TurnProgress } from './run-turn.ts'
import { runTurn } from './run-turn.ts'

/** Sessions with a turn running in this process: a resume must not close those. */
const runningTurns = new WeakSet<Session>()

/** A queued user message and the settle function of the promise its `followup` returned. */
interface QueuedMessage {
  readonly message: Message
  readonly settle: (result: TurnResult) => void
}

/**
 * One conversation driven by the loop. User messages queue FIFO; each starts one turn.
 * Maintenance tasks (manual compaction) run only while idle, and followups queued meanwhile
 * wait for them.
 *
 * Nothing the loop appends or flushes can escape as an unhandled rejection: a failure inside a
 * turn ends it with reason `error` and the cause on `turn/end` (and a `TURN_FAILED`
 * {@link AgentError} on {@link lastError} and `agent/error`); a failure the log cannot record
 * (the `turn/end` itself refused, a failed flush) becomes a `LOG_FAILED` {@link AgentError} on
 * {@link lastError}, `agent/error` and `internal/warning`, the queue is handed back on its
 * `unsent`, and the agent is idle again. Every `followup` promise resolves with what became of
 * its message.
 */
export class Agent implements TurnAgent {
  private readonly queue: QueuedMessage[] = []
  private statusValue: AgentStatus = 'idle'
  private controller?: AbortController
  /** The running maintenance task yields to user input (see {@link MaintenanceOptions.yieldToFollowup}). */
  private yielding = false
  private idleWaiters: Array<() => void> = []
  private firstRequest = true
  private turnCounter: number
  private draining = false
  private lastErrorValue?: AgentError
  /** The latest conversation request, whatever its stage (a fork refuses while it is not answered). */
  private latestRequest?: AgentRequest
  private lastAnswered?: AgentRequest
  /** Told of this agent's requests (a fork's first response lets its siblings go). */
  private requestListener?: (request: AgentRequest) => void
  /** Per replayed request (its messages array): settles once the first fork from it began to answer or failed. */
  private readonly firstForks = new WeakMap<readonly unknown[], Promise<void>>()
  /** Forks this agent numbered so far (its log's `agent/fork-start` events when first needed). */
  private forksStarted?: number
  /** Set when this agent is a fork: from the `agent/fork` event its session starts with. */
  readonly lineage?: ForkLineage

  constructor(
    private readonly ctx: Context,
    /** The session this agent appends to. */
    readonly session: Session,
    /** The validated, frozen options. */
    readonly options: AgentOptions,
  ) {
    this.turnCounter = session.events.filter((event) => event.type === 'turn/start').length
    const lineage = forkLineageOf(session)
    if (lineage) this.lineage = lineage
  }

  /**
   * The last conversation request of this agent the provider answered in this process, with the
   * surface nodes it was derived from: what a fork and a warm summary call replay (its cache entry
   * exists). `undefined` before the first answer (after a resume, until a turn ran).
   */
  get lastRequest(): AgentRequest | undefined {
    return this.lastAnswered
  }

  /** Records the agent's latest conversation request as it is sent, begins, is answered or fails. @internal */
  noteRequest(request: AgentRequest): void {
    this.latestRequest = request
    if (request.stage === 'answered') this.lastAnswered = request
    this.requestListener?.(request)
  }

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
   * turn has ended. Callable while a turn runs (from a tool) as long as the last request has
   * been answered.
   * @throws TypeError naming a bad option; AgentError `FORK_REFUSED` when no request of this
   *   agent was answered in this process, the last one is still in flight or failed, or the
   *   child session exists; `LOG_FAILED` when the parent's log refuses the fork's events.
   */
  async fork(options: ForkOptions): Promise<ForkResult> {
    validateForkOptions(options)
    // The last request, once answered (a later one still in flight or failed refuses the fork).
    const sent = this.latestRequest
    const refusal = forkRefusal(this.session.id, sent)
    if (refusal || !sent) throw refusal
    // Numbered synchronously, so siblings started together get distinct ids.
    this.forksStarted ??= countForkStarts(this.session)
    this.forksStarted += 1
    const childId = options.sessionId ?? `${this.session.id}.fork-${this.forksStarted}`
    const parentSeq = sent.nodes.at(-1) ?? -1
    // The first fork from a request lets its siblings go once its response has begun.
    const first = this.firstForks.get(sent.messages)
    let began: (() => void) | undefined
    if (!first) this.firstForks.set(sent.messages, new Promise<void>((resolve) => (began = resolve)))
    try {
      if (first && options.siblingsWaitForFirst !== false) await first
      if (await sessionExists(this.ctx, childId))
        throw new AgentError(
          'FORK_REFUSED',
          `agent ${this.session.id} cannot fork into session ${childId}: it exists already (pass another sessionId)`,
        )
      try {
        this.session.append('agent/fork-start', { childSessionId: childId, parentSeq })
        await this.ctx.sessions.flush(this.session)
      } catch (error) {
        throw new AgentError(
          'LOG_FAILED',
          `agent ${this.session.id}: logging the start of fork ${childId} failed: ${describe(error)}`,
          { cause: error },
        )
      }
      const lineage = {
        parentSessionId: this.session.id,
        parentSeq,
        header: sent.header,
        cacheSessionId: this.lineage?.cacheSessionId ?? this.session.id,
        ...(options.tools ? { tools: options.tools } : {}),
        ...(options.cacheTtl === 'inherit' ? {} : { cacheTtl: 'short' as const }),
      }
      let turn: TurnResult
      let childSession: Session | undefined
      try {
        childSession = await createForkSession(this.ctx, childId, lineage, sent.messages)
        const child = new Agent(
          this.ctx,
          childSession,
          options.maxSteps === undefined
            ? this.options
            : Object.freeze({ ...this.options, maxSteps: options.maxSteps }),
        )
        child.requestListener = (request) => {
          if (request.stage !== 'sent') began?.()
        }
        const onAbort = () => child.abort(options.signal?.reason)
        options.signal?.addEventListener('abort', onAbort, { once: true })
        try {
          turn = options.signal?.aborted
            ? { reason: 'aborted', steps: 0, error: 'the fork was aborted before it started' }
            : await child.followup(options.task)
        } finally {
          options.signal?.removeEventListener('abort', onAbort)
        }
      } catch (error) {
        turn = {
          reason: 'error',
          steps: 0,
          errorCode: AgentError.isInstance(error) ? error.code : 'UNEXPECTED',
          error: describe(error),
          cause: error,
        }
      }
      const answer = turn.reason === 'stop' && childSession ? lastAnswer(childSession) : undefined
      const result: ForkResult =
        answer !== undefined
          ? { sessionId: childId, reason: 'finished', answer, turn }
          : {
              sessionId: childId,
              reason: 'failed',
              error: `the fork's turn ended with reason ${turn.reason}${turn.error ? `: ${turn.error}` : ''}`,
              turn,
            }
      if (childSession)
        await this.ctx.sessions
          .close(childSession)
          .catch((error: unknown) =>
            this.ctx.emit('internal/warning', `fork ${childId}: closing its session failed: ${describe(error)}`),
          )
      try {
        this.session.append('agent/fork-end', {
          childSessionId: childId,
          reason: result.reason,
          ...(result.answer === undefined ? {} : { answer: result.answer }),
          ...(result.error === undefined ? {} : { error: result.error }),
        })
        await this.ctx.sessions.flush(this.session)
      } catch (error) {
        throw new AgentError(
          'LOG_FAILED',
          `agent ${this.session.id}: logging the end of fork ${childId} failed: ${describe(error)}`,
          { cause: error },
        )
      }
      return result
    } finally {
      began?.()
    }
  }

  /** `idle`, `running` (a turn) or `maintenance` (a `runMaintenance` task). */
  get status(): AgentStatus {
    return this.statusValue
  }

  /**
   * The latest failure, or `undefined`: a turn that ended with reason `error` (code
   * `TURN_FAILED`) or a failure the session log could not record (code `LOG_FAILED`). It is
   * never cleared, and it is set before `whenIdle()` and the failed turn's `followup` promise
   * resolve, so a host checks it after awaiting either.
   */
  get lastError(): AgentError | undefined {
    return this.lastErrorValue
  }

  /**
   * Queues a user message; it starts a turn as soon as the agent is free. The promise resolves
   * (it never rejects) when that turn has ended and its `turn/end` is flushed, with the turn's
   * reason, steps and, on failure, `errorCode`, `error` and `cause`; or with reason `unsent`
   * when the message never started a turn.
   */
  followup(message: string | Message): Promise<TurnResult> {
    const queued = typeof message === 'string' ? createUserMessage(message) : message
    const result = new Promise<TurnResult>((settle) => this.queue.push({ message: queued, settle }))
    if (this.statusValue === 'idle') this.drain()
    else if (this.statusValue === 'maintenance' && this.yielding)
      this.controller?.abort(
        new AgentError(
          'PREEMPTED',
          `agent for session ${this.session.id}: a followup arrived, so the maintenance task was cancelled`,
        ),
      )
    return result
  }

  /** Resolves when no turn or maintenance task runs and nothing is queued. Never rejects. */
  whenIdle(): Promise<void> {
    if (this.statusValue === 'idle' && this.queue.length === 0 && !this.draining) return Promise.resolve()
    return new Promise((resolve) => this.idleWaiters.push(resolve))
  }

  /**
   * Aborts the running turn (it ends with reason `aborted`; partial output is logged as
   * `assistant/partial`) and removes queued followups, which are returned unsent.
   */
  abort(reason: unknown = new Error('aborted by the host')): Message[] {
    const dropped = this.queue.splice(0)
    this.controller?.abort(reason)
    for (const { settle } of dropped)
      settle({
        reason: 'unsent',
        steps: 0,
        errorCode: 'ABORTED',
        error: 'removed from the queue by abort() before its turn started',
        cause: reason,
      })
    return dropped.map(({ message }) => message)
  }

  /**
   * Runs `task` while the agent is idle; followups queued meanwhile wait until it finishes
   * (with `yieldToFollowup`, a followup first aborts the task's signal).
   * @throws AgentError `BUSY` (as a rejected promise) when a turn or another task is running.
   */
  async runMaintenance<T>(task: (signal: AbortSignal) => Promise<T>, options: MaintenanceOptions = {}): Promise<T> {
    if (this.statusValue !== 'idle' || this.draining) {
      throw new AgentError(
        'BUSY',
        `agent for session ${this.session.id} is ${this.draining ? 'running' : this.statusValue}; maintenance runs ` +
          'only while it is idle',
      )
    }
    const controller = new AbortController()
    this.controller = controller
    this.yielding = options.yieldToFollowup === true
    this.setStatus('maintenance')
    try {
      return await task(controller.signal)
    } finally {
      this.controller = undefined
      this.yielding = false
      this.setStatus('idle')
      // With nothing queued the agent is idle now, not for a tick of an empty drain: a caller
      // woken by whenIdle() may start maintenance of its own at once.
      if (this.queue.length > 0) this.drain()
      else this.wakeIdleWaiters()
    }
  }

  /** True on the first request this agent instance builds (a logged header then means a resume). */
  consumeFirstRequest(): boolean {
    const first = this.firstRequest
    this.firstRequest = false
    return first
  }

  /**
   * Makes a resumed log consistent before the first turn: runs the `agent/resume` hook, then
   * logs `turn/end { reason: 'interrupted' }` for a turn the previous process left open, and
   * flushes. Called once by `ctx.agentLoop.create`; failures are reported like any log failure.
   * @internal
   */
  async resume(): Promise<void> {
    if (this.session.length === 0 || runningTurns.has(this.session)) return
    try {
      await this.ctx.serial('agent/resume', { agent: this })
      // Inside the open turn, when there is one: a fork started from a tool call ends before it.
      await settleOpenForks(this.ctx, this.session)
      const open = findInterruptedTurn(this.session)
      if (open) {
        this.session.append('turn/end', {
          turn: open.turn,
          reason: 'interrupted',
          steps: open.steps,
          error: 'the process running this turn ended before the turn did; closed when the session was resumed',
        })
      }
      await this.ctx.sessions.flush(this.session)
    } catch (error) {
      this.report(
        new AgentError('LOG_FAILED', `agent ${this.session.id}: resuming the session failed: ${describe(error)}`, {
          cause: error,
        }),
      )
    }
  }

  /** Resolves every pending whenIdle(). */
  private wakeIdleWaiters(): void {
    for (const resolve of this.idleWaiters.splice(0)) resolve()
  }

  private drain(): void {
    if (this.draining || this.statusValue !== 'idle') return
    this.draining = true
    // runQueue handles its own failures; this catch only guards against a bug in that handling.
    this.runQueue()
      .catch((error: unknown) =>
        this.report(
          new AgentError('LOG_FAILED', `agent ${this.session.id}: the turn loop failed: ${describe(error)}`, {
            cause: error,
            unsent: this.handBack(this.queue.splice(0)),
          }),
        ),
      )
      .finally(() => {
        this.draining = false
        this.controller = undefined
        if (this.statusValue === 'running') this.setStatus('idle')
        // An agent/error listener may have queued a followup (e.g. the unsent ones) meanwhile.
        if (this.queue.length > 0 && this.statusValue === 'idle') return this.drain()
        this.wakeIdleWaiters()
      })
  }

  private async runQueue(): Promise<void> {
    while (this.queue.length > 0) {
      const queued = this.queue.shift() as QueuedMessage
      this.controller = new AbortController()
      this.setStatus('running')
      runningTurns.add(this.session)
      let failure: AgentError | undefined
      let result: TurnResult | undefined
      try {
        ;({ failure, result } = await this.runOne(queued, this.controller.signal))
      } finally {
        runningTurns.delete(this.session)
        this.controller = undefined
        this.setStatus('idle')
      }
      if (result?.reason === 'error') {
        const text = `agent ${this.session.id}: turn ${result.turn} failed (${result.errorCode}): ${result.error}`
        this.report(
          new AgentError('TURN_FAILED', text, {
            cause: result.cause,
            turn: result.turn,
            turnErrorCode: result.errorCode,
          }),
          false,
        )
      }
      // A log failure is reported last, so lastError holds it (with the unsent queue).
      if (failure) this.report(failure)
      if (result) queued.settle(result)
      if (failure) return
    }
  }

  /**
   * Runs one turn. Returns the turn's result (absent when the message was handed back unsent),
   * and the failure the log could not record, which stops the queue.
   */
  private async runOne(
    queued: QueuedMessage,
    signal: AbortSignal,
  ): Promise<{ failure?: AgentError; result?: TurnResult }> {
    const { message } = queued
    const turn = ++this.turnCounter
    const lost = (cause: unknown, what: string, messageUnsent: boolean): { failure: AgentError } => {
      const text = `agent ${this.session.id}: ${what} of turn ${turn} failed: ${describe(cause)}`
      const unsent = this.handBack([...(messageUnsent ? [queued] : []), ...this.queue.splice(0)], text, cause)
      return { failure: new AgentError('LOG_FAILED', text, { cause, turn, unsent }) }
    }
    try {
      this.session.append('turn/start', { turn })
    } catch (error) {
      this.turnCounter -= 1
      return lost(error, 'logging the start', true)
    }
    let messageError: unknown
    let outcome: TurnOutcome
    const progress: TurnProgress = { step: 0 }
    try {
      this.session.append('user/message', { message }, 'append')
    } catch (error) {
      messageError = error ?? new Error('the append threw nothing')
    }
    if (messageError !== undefined) {
      outcome = {
        reason: 'error',
        steps: 0,
        errorCode: errorCode(messageError),
        error: `the user message could not be logged: ${describe(messageError)}`,
        cause: messageError,
      }
    } else {
      try {
        outcome = await runTurn(this.ctx, this, turn, signal, progress)
      } catch (error) {
        // An append refused mid-turn (a validator, a closed session), a failed flush or a hook
        // that threw: the turn ends here with the cause, and the log says so if it still can.
        outcome = {
          reason: 'error',
          steps: progress.step,
          errorCode: errorCode(error),
          error: describe(error),
          cause: error,
        }
      }
    }
    const unsent = messageError !== undefined
    const result: TurnResult = { turn, ...outcome }
    try {
      this.session.append('turn/end', { turn, reason: outcome.reason, steps: outcome.steps, ...loggedError(outcome) })
    } catch (error) {
      return {
        ...lost(error, `logging the end (${outcome.reason}${outcome.error ? `: ${outcome.error}` : ''})`, unsent),
        ...(unsent ? {} : { result }),
      }
    }
    try {
      await this.ctx.sessions.flush(this.session)
    } catch (error) {
      return { ...lost(error, 'flushing the session at the end', unsent), ...(unsent ? {} : { result }) }
    }
    return unsent ? lost(messageError, 'logging the user message', true) : { result }
  }

  /**
   * Resolves the `followup` promises of messages handed back unsent (with the failure that
   * stopped them) and returns the messages, for `AgentError.unsent`.
   */
  private handBack(
    queued: readonly QueuedMessage[],
    error = 'the turn loop failed before this message started a turn',
    cause?: unknown,
  ): Message[] {
    for (const { settle } of queued) settle({ reason: 'unsent', steps: 0, errorCode: 'LOG_FAILED', error, cause })
    return queued.map(({ message }) => message)
  }

  /** Keeps `error` on lastError and fires `agent/error` (and, for log failures, `internal/warning`). */
  private report(error: AgentError, warn = true): void {
    this.lastErrorValue = error
    // Listeners are host code; one that throws must not turn a reported failure into a crash.
    try {
      this.ctx.emit('agent/error', this, error)
    } catch {
      // lastError and the warning below still tell the host.
    }
    if (!warn) return
    try {
      this.ctx.emit('internal/warning', error.message)
    } catch {
      // lastError still holds the failure.
    }
  }

  private setStatus(status: AgentStatus): void {
    this.statusValue = status
    try {
      this.ctx.emit('agent/status', this, status)
    } catch (error) {
      // A throwing status listener must not strand the agent in a status it already left.
      this.ctx.emit('internal/warning', `agent ${this.session.id}: an agent/status listener failed: ${describe(error)}`)
    }
  }
}

/** The failure fields a `turn/end` logs (the thrown value itself stays out of the log). */
function loggedError({ errorCode, error }: TurnOutcome): { errorCode?: string; error?: string } {
  return { ...(errorCode === undefined ? {} : { errorCode }), ...(error === undefined ? {} : { error }) }
}

function describe(value: unknown): string {
  return value instanceof Error ? value.message : String(value)
}

/** The code a failure carries (`SessionError`, `LlmError`, a Node errno), else `UNEXPECTED`. */
function errorCode(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' && code !== '' ? code : 'UNEXPECTED'
}
