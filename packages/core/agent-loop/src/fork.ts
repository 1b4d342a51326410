import type { Context } from '@cordisjs/core'
import type { Message, ToolResultMessage } from '@warmfold/llm'
import { textOf } from '@warmfold/llm'
import type { Session } from '@warmfold/session'
import { SessionError } from '@warmfold/session'
import { AgentError, describe } from './agent-error.ts'
import type { AgentOptions } from './agent-options.ts'
import type { ForkOptions, ForkResult } from './fork-options.ts'
import { validateForkOptions } from './fork-options.ts'
import type { TurnResult } from './turn-result.ts'
import type { ForkLineage } from './fork-lineage.ts'
import type { AgentRequest } from './agent-request.ts'

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

/** Session `id` as the store holds it, or `undefined` when there is none (any other failure is thrown). */
function readStored(ctx: Context, id: string): Promise<Session | undefined> {
  return ctx.sessions.read(id).catch((error: unknown) => {
    if (SessionError.isInstance(error) && error.code === 'NOT_FOUND') return undefined
    throw error
  })
}

/**
 * Creates the fork's session and writes, in one unit, its `agent/fork` event and the replayed
 * messages (the parent's last request, byte for byte), then flushes it.
 */
export async function createForkSession(
  ctx: Context,
  childId: string,
  lineage: Omit<ForkLineage, 'tools'> & { tools?: readonly string[] },
  messages: readonly Message[],
): Promise<Session> {
  const session = await ctx.sessions.create(childId)
  session.unit(() => {
    // An absent `tools` or `cacheTtl` is left out of the logged event (it is stored as JSON).
    session.append('agent/fork', { ...lineage, tools: lineage.tools && [...lineage.tools] })
    for (const message of messages) appendReplayed(session, message)
  })
  await ctx.sessions.flush(session)
  return session
}

/** Logs one replayed message as the surface event that carries its kind. */
function appendReplayed(session: Session, message: Message): void {
  if (message.role === 'assistant') session.append('assistant/message', { message }, 'append')
  else if (message.role === 'user' && message.content.length === 1 && message.content[0]?.type === 'tool-result')
    session.append('tool/result', { message: message as ToolResultMessage }, 'append')
  else session.append('user/message', { message }, 'append')
}

/** The text of the session's last assistant message (a finished fork's answer). */
export function lastAnswer(session: Session): string | undefined {
  for (let seq = session.length - 1; seq >= 0; seq--) {
    const event = session.eventAt(seq)
    if (event?.type === 'assistant/message') return textOf(event.data.message.content)
  }
  return undefined
}

/**
 * On a parent's resume: logs the `agent/fork-end` of every fork whose start is logged and whose
 * end is not (the process ended before it). The child's stored log decides: a turn that ended
 * with a final answer is `finished` with that answer, anything else (no such turn, an
 * interrupted or failed one, no child session at all) `failed`. Exactly one end per start.
 */
export async function settleOpenForks(ctx: Context, session: Session): Promise<void> {
  const open = new Set<string>()
  for (const event of session.events) {
    if (event.type === 'agent/fork-start') open.add(event.data.childSessionId)
    else if (event.type === 'agent/fork-end') open.delete(event.data.childSessionId)
  }
  for (const childId of open) {
    const child = await readStored(ctx, childId)
    // The reason on the fork's first `turn/end` (its task's turn), if it ended.
    const end = child?.events.find((event) => event.type === 'turn/end')?.data as { reason: string } | undefined
    if (end?.reason === 'stop' && child) {
      session.append('agent/fork-end', { childSessionId: childId, reason: 'finished', answer: lastAnswer(child) ?? '' })
    } else {
      const why = !child
        ? 'its session was never written'
        : end === undefined
          ? 'its turn never ended'
          : `its turn ended with reason ${end.reason}`
      session.append('agent/fork-end', {
        childSessionId: childId,
        reason: 'failed',
        error: `the process running this fork ended before the fork did (${why}); settled when the parent was resumed`,
      })
    }
  }
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
  /** Forks this agent numbered so far (its log's `agent/fork-start` events when first needed). */
  private started?: number

  constructor(
    private readonly ctx: Context,
    private readonly parent: ForkParent,
  ) {}

  async fork(options: ForkOptions): Promise<ForkResult> {
    const { session, lineage: parentLineage } = this.parent
    validateForkOptions(options)
    // The last request, once answered (a later one still in flight or failed refuses the fork).
    const sent = this.parent.latestRequest()
    const refusal = forkRefusal(session.id, sent)
    if (refusal || !sent) throw refusal
    // Numbered synchronously, so siblings started together get distinct ids.
    this.started ??= session.events.filter((event) => event.type === 'agent/fork-start').length
    this.started += 1
    const childId = options.sessionId ?? `${session.id}.fork-${this.started}`
    const parentSeq = sent.nodes.at(-1) ?? -1
    // The first fork from a request lets its siblings go once its response has begun.
    const first = this.firstForks.get(sent.messages)
    let began: (() => void) | undefined
    if (!first) this.firstForks.set(sent.messages, new Promise<void>((resolve) => (began = resolve)))
    try {
      if (first && options.siblingsWaitForFirst !== false) await first
      if (await readStored(this.ctx, childId))
        throw new AgentError(
          'FORK_REFUSED',
          `agent ${session.id} cannot fork into session ${childId}: it exists already (pass another sessionId)`,
        )
      await this.logged(`the start of fork ${childId}`, () =>
        session.append('agent/fork-start', { childSessionId: childId, parentSeq }),
      )
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
            if (request.stage !== 'sent') began?.()
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
      await this.logged(`the end of fork ${childId}`, () =>
        session.append('agent/fork-end', {
          childSessionId: childId,
          reason: result.reason,
          answer: result.answer,
          error: result.error,
        }),
      )
      return result
    } finally {
      began?.()
    }
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
