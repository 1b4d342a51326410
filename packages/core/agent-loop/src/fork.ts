import type { Context } from '@cordisjs/core'
import type { Message } from '@warmfold/llm'
import type { Session } from '@warmfold/session'
import { AgentError, describe } from './agent-error.ts'
import type { AgentOptions } from './agent-options.ts'
import type { ForkOptions, ForkResult } from './fork-options.ts'
import { validateForkOptions } from './fork-options.ts'
import type { TurnResult } from './turn-result.ts'
import type { ForkLineage } from './fork-lineage.ts'
import type { AgentRequest } from './agent-request.ts'
import { childExists, createForkSession, forkNumberOf, lastAnswer, nextForkNumber, readStored } from './fork-session.ts'

/**
 * Why `sent` cannot be replayed by a fork, or `undefined` when it can: a fork reads the entry the
 * provider wrote for the parent's last request, which exists only once that request was answered.
 */
export function forkRefusal(sessionId: string, sent: AgentRequest | undefined): AgentError | undefined {
  const refuse = (why: string) => new AgentError('FORK_REFUSED', `agent ${sessionId} cannot fork: ${why}`)
  if (!sent)
    return refuse(
      'it has sent no request in this process yet, so there is no request to replay (after a resume, run a turn first)',
    )
  const which = `its last request (turn ${sent.turn}, step ${sent.step})`
  if (sent.stage === 'sent' || sent.stage === 'began')
    return refuse(
      `${which} is still being answered, so the prefix the fork would replay is not written yet; fork from a tool ` +
        'call or once the turn has ended',
    )
  if (sent.stage === 'failed')
    return refuse(`${which} failed or was aborted, so the provider holds no entry for a fork to read`)
  return undefined
}

/** What a fork needs of the agent it forks from. */
export interface ForkParent {
  readonly session: Session
  readonly options: AgentOptions
  readonly lineage?: ForkLineage
  /** The parent's latest conversation request, whatever its stage. */
  latestRequest(): AgentRequest | undefined
  /** A child agent on `session`, whose requests are told to `onRequest` as their stage changes. */
  spawn(session: Session, options: AgentOptions, onRequest: (request: AgentRequest) => void): ForkChild
}

/** The part of a child agent a fork drives. */
export interface ForkChild {
  followup(message: string | Message): Promise<TurnResult>
  abort(reason?: unknown): Message[]
}

/** The forks of one agent: their numbering, the sibling wait and each child's run (see `Agent.fork`). */
export class Forks {
  /** Per replayed request (its messages array): settles once the first fork from it began to answer or failed. */
  private readonly firstForks = new WeakMap<readonly unknown[], Promise<void>>()
  /** The number of this agent's next fork (see `nextForkNumber`), once first needed. */
  private next?: number
  /** Child session ids of this agent's forks under way: a second fork into one is refused before it logs anything. */
  private readonly children = new Set<string>()

  constructor(
    private readonly ctx: Context,
    private readonly parent: ForkParent,
  ) {}

  async fork(options: ForkOptions): Promise<ForkResult> {
    const session = this.parent.session
    validateForkOptions(options)
    // The last request, once answered (a later one still in flight or failed refuses the fork).
    const sent = this.parent.latestRequest()
    const refusal = forkRefusal(session.id, sent)
    if (refusal || !sent) throw refusal
    // Numbered synchronously, so siblings started together get distinct ids; a number is never reused.
    this.next ??= nextForkNumber(session)
    const childId = options.sessionId ?? `${session.id}.fork-${this.next}`
    this.next = Math.max(this.next, forkNumberOf(session.id, childId) ?? 0) + 1
    // The first fork from a request lets its siblings go once its response has begun.
    const first = this.firstForks.get(sent.messages)
    let began: (() => void) | undefined
    if (!first) this.firstForks.set(sent.messages, new Promise<void>((resolve) => (began = resolve)))
    try {
      if (first && options.siblingsWaitForFirst !== false) await first
      if (this.children.has(childId)) throw childExists(session.id, childId)
      this.children.add(childId)
      try {
        if (await readStored(this.ctx, childId)) throw childExists(session.id, childId)
        const parentSeq = sent.nodes.at(-1) ?? -1
        await this.logged(`the start of fork ${childId}`, () =>
          session.append('agent/fork-start', { childSessionId: childId, parentSeq }),
        )
        return await this.run(options, sent, childId, parentSeq, () => began?.())
      } finally {
        this.children.delete(childId)
      }
    } finally {
      began?.()
    }
  }

  /** Makes the child, runs its turn and logs the fork's end (its start is logged). */
  private async run(
    options: ForkOptions,
    sent: AgentRequest,
    childId: string,
    parentSeq: number,
    began: () => void,
  ): Promise<ForkResult> {
    const { session, lineage: parentLineage } = this.parent
    const lineage = {
      parentSessionId: session.id,
      parentSeq,
      header: sent.header,
      cacheSessionId: parentLineage?.cacheSessionId ?? session.id,
      ...(options.tools ? { tools: options.tools } : {}),
      ...(options.cacheTtl === 'inherit' ? {} : { cacheTtl: 'short' as const }),
    }
    let turn: TurnResult
    let childSession: Session | undefined
    try {
      childSession = await createForkSession(this.ctx, childId, lineage, sent.messages)
      const child = this.parent.spawn(
        childSession,
        options.maxSteps === undefined
          ? this.parent.options
          : Object.freeze({ ...this.parent.options, maxSteps: options.maxSteps }),
        (request) => {
          if (request.stage !== 'sent') began()
        },
      )
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
      // Another writer made the child between the check and the create: refused, its start ended.
      if (AgentError.isInstance(error) && error.code === 'FORK_REFUSED') {
        await this.logEnd(childId, { reason: 'failed', error: error.message })
        throw error
      }
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
    await this.logEnd(childId, result)
    return result
  }

  /** Logs the one `agent/fork-end` of fork `childId`. */
  private logEnd(childId: string, end: Pick<ForkResult, 'reason' | 'answer' | 'error'>): Promise<void> {
    return this.logged(`the end of fork ${childId}`, () =>
      this.parent.session.append('agent/fork-end', {
        childSessionId: childId,
        reason: end.reason,
        answer: end.answer,
        error: end.error,
      }),
    )
  }

  /** Appends to the parent's log with `append` and flushes it; a failure is `LOG_FAILED` naming `what` was logged. */
  private async logged(what: string, append: () => void): Promise<void> {
    const session = this.parent.session
    try {
      append()
      await this.ctx.sessions.flush(session)
    } catch (error) {
      throw new AgentError('LOG_FAILED', `agent ${session.id}: logging ${what} failed: ${describe(error)}`, {
        cause: error,
      })
    }
  }
}
