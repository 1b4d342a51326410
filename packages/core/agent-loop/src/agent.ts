import type { Context } from '@cordisjs/core'
import type { Message } from '@warmfold/llm'
import { createUserMessage } from '@warmfold/llm'
import type { Session } from '@warmfold/session'
import type { AgentStatus } from './agent-events.ts'
import { AgentError } from './agent-error.ts'
import type { AgentOptions } from './agent-options.ts'
import type { TurnOutcome } from './run-turn.ts'
import { runTurn } from './run-turn.ts'

/**
 * One conversation driven by the loop. User messages queue FIFO; each starts one turn.
 * Maintenance tasks (manual compaction) run only while idle, and followups queued meanwhile
 * wait for them.
 */
export class Agent {
  private readonly queue: Message[] = []
  private statusValue: AgentStatus = 'idle'
  private controller?: AbortController
  private idleWaiters: Array<() => void> = []
  private firstRequest = true
  private turnCounter: number

  constructor(
    private readonly ctx: Context,
    /** The session this agent appends to. */
    readonly session: Session,
    /** The validated, frozen options. */
    readonly options: AgentOptions,
  ) {
    this.turnCounter = session.events.filter((event) => event.type === 'turn/start').length
  }

  /** `idle`, `running` (a turn) or `maintenance` (a `runMaintenance` task). */
  get status(): AgentStatus {
    return this.statusValue
  }

  /** Queues a user message; it starts a turn as soon as the agent is free. */
  followup(message: string | Message): void {
    this.queue.push(typeof message === 'string' ? createUserMessage(message) : message)
    if (this.statusValue === 'idle') void this.drain()
  }

  /** Resolves when no turn or maintenance task runs and nothing is queued. */
  whenIdle(): Promise<void> {
    if (this.statusValue === 'idle' && this.queue.length === 0) return Promise.resolve()
    return new Promise((resolve) => this.idleWaiters.push(resolve))
  }

  /**
   * Aborts the running turn (it ends with reason `aborted`; partial output is logged as
   * `assistant/partial`) and removes queued followups, which are returned unsent.
   */
  abort(reason: unknown = new Error('aborted by the host')): Message[] {
    const dropped = this.queue.splice(0)
    this.controller?.abort(reason)
    return dropped
  }

  /**
   * Runs `task` while the agent is idle; followups queued meanwhile wait until it finishes.
   * @throws AgentError `BUSY` (as a rejected promise) when a turn or another task is running.
   */
  async runMaintenance<T>(task: (signal: AbortSignal) => Promise<T>): Promise<T> {
    if (this.statusValue !== 'idle') {
      throw new AgentError('BUSY', `agent for session ${this.session.id} is ${this.statusValue}; maintenance runs only while it is idle`)
    }
    const controller = new AbortController()
    this.controller = controller
    this.setStatus('maintenance')
    try {
      return await task(controller.signal)
    } finally {
      this.controller = undefined
      this.setStatus('idle')
      void this.drain()
    }
  }

  /** True on the first request this agent instance builds (a logged header then means a resume). */
  consumeFirstRequest(): boolean {
    const first = this.firstRequest
    this.firstRequest = false
    return first
  }

  private async drain(): Promise<void> {
    if (this.statusValue !== 'idle') return
    while (this.queue.length > 0) {
      const message = this.queue.shift() as Message
      const controller = new AbortController()
      this.controller = controller
      this.setStatus('running')
      const turn = ++this.turnCounter
      let outcome: TurnOutcome
      try {
        this.session.append('turn/start', { turn })
        this.session.append('user/message', { message }, 'append')
        outcome = await runTurn(this.ctx, this, turn, controller.signal)
      } catch (error) {
        outcome = { reason: 'error', steps: 0, errorCode: 'UNEXPECTED', error: error instanceof Error ? error.message : String(error) }
      }
      this.session.append('turn/end', { turn, ...outcome })
      await this.ctx.sessions.flush(this.session).catch((error: unknown) => {
        this.ctx.emit('internal/warning', `agent ${this.session.id}: flushing the session failed: ${(error as Error).message}`)
      })
      this.controller = undefined
      this.setStatus('idle')
    }
    const waiters = this.idleWaiters.splice(0)
    for (const resolve of waiters) resolve()
  }

  private setStatus(status: AgentStatus): void {
    this.statusValue = status
    this.ctx.emit('agent/status', this, status)
  }
}
