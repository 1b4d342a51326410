import type { Context } from '@cordisjs/core'
import type { Message } from '@warmfold/llm'
import { createUserMessage } from '@warmfold/llm'
import type { Session } from '@warmfold/session'
import { AgentError, describe } from './agent-error.ts'
import type { AgentStatus, MaintenanceOptions } from './agent-handle.ts'
import type { TurnResult } from './turn-result.ts'
import type { AgentOptions } from './agent-options.ts'
import type { ForkOptions, ForkResult } from './fork-options.ts'
import { Forks } from './fork.ts'
import { closeInterruptedTurn } from './interrupted-turn.ts'
import type { ForkLineage } from './fork-lineage.ts'
import type { AgentRequest } from './agent-request.ts'
import { forkLineageOf } from './fork-lineage.ts'
import type { QueuedMessage } from './logged-turn.ts'
import { handBack, runLoggedTurn } from './logged-turn.ts'
import type { TurnAgent } from './run-turn.ts'
import { abortOnUnload } from './unload-abort.ts'

/** Sessions with a turn running in this process: a resume must not close those. */
const runningTurns = new WeakSet<Session>()

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
  private readonly forks: Forks
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
    this.forks = new Forks(ctx, {
      session,
      options,
      lineage,
      latestRequest: () => this.latestRequest,
      spawn: (child, childOptions, onRequest) => {
        const agent = new Agent(ctx, child, childOptions)
        agent.requestListener = onRequest
        return agent
      },
    })
  }

  /** See {@link AgentHandle.lastRequest}. */
  get lastRequest(): AgentRequest | undefined {
    return this.lastAnswered
  }

  /** Records the agent's latest conversation request as it is sent, begins, is answered or fails. @internal */
  noteRequest(request: AgentRequest): void {
    this.latestRequest = request
    if (request.stage === 'answered') this.lastAnswered = request
    this.requestListener?.(request)
  }

  /** See {@link AgentHandle.fork}. */
  fork(options: ForkOptions): Promise<ForkResult> {
    return this.forks.fork(options)
  }

  /** See {@link AgentHandle.status}. */
  get status(): AgentStatus {
    return this.statusValue
  }

  /** See {@link AgentHandle.lastError}. */
  get lastError(): AgentError | undefined {
    return this.lastErrorValue
  }

  /** See {@link AgentHandle.followup}. */
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

  /** See {@link AgentHandle.whenIdle}. */
  whenIdle(): Promise<void> {
    if (this.statusValue === 'idle' && this.queue.length === 0 && !this.draining) return Promise.resolve()
    return new Promise((resolve) => this.idleWaiters.push(resolve))
  }

  /** See {@link AgentHandle.abort}. */
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

  /** See {@link AgentHandle.runMaintenance}. */
  async runMaintenance<T>(task: (signal: AbortSignal) => Promise<T>, options: MaintenanceOptions = {}): Promise<T> {
    if (this.statusValue !== 'idle' || this.draining) {
      throw new AgentError(
        'BUSY',
        `agent for session ${this.session.id} is ${this.draining ? 'running' : this.statusValue}; maintenance runs ` +
          'only while it is idle',
      )
    }
    const { controller, release } = abortOnUnload(this.ctx, this.session.id)
    this.controller = controller
    this.yielding = options.yieldToFollowup === true
    this.setStatus('maintenance')
    try {
      return await task(controller.signal)
    } finally {
      release()
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
      await closeInterruptedTurn(this.ctx, this)
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
            unsent: handBack(this.queue.splice(0)),
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
      const { controller, release } = abortOnUnload(this.ctx, this.session.id)
      this.controller = controller
      this.setStatus('running')
      runningTurns.add(this.session)
      let failure: AgentError | undefined
      let result: TurnResult | undefined
      try {
        ;({ failure, result } = await this.runOne(queued, controller.signal))
      } finally {
        release()
        runningTurns.delete(this.session)
        this.controller = undefined
        this.setStatus('idle')
      }
      if (result?.reason === 'error') {
        const { turn, errorCode: turnErrorCode, cause } = result
        const text = `agent ${this.session.id}: turn ${turn} failed (${turnErrorCode}): ${result.error}`
        this.report(new AgentError('TURN_FAILED', text, { cause, turn, turnErrorCode }), false)
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
    const turn = ++this.turnCounter
    const run = runLoggedTurn(this.ctx, this, turn, queued.message, signal)
    const { result, started, lost } = run instanceof Promise ? await run : run
    if (!started) this.turnCounter -= 1
    if (!lost) return { result }
    const { cause, what, messageUnsent } = lost
    const text = `agent ${this.session.id}: ${what} of turn ${turn} failed: ${describe(cause)}`
    const unsent = handBack([...(messageUnsent ? [queued] : []), ...this.queue.splice(0)], text, cause)
    return { failure: new AgentError('LOG_FAILED', text, { cause, turn, unsent }), ...(result ? { result } : {}) }
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
