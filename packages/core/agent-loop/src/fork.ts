import type { Context } from '@cordisjs/core'
import type { Message, ToolResultMessage } from '@warmfold/llm'
import { textOf } from '@warmfold/llm'
import type { Session } from '@warmfold/session'
import { SessionError } from '@warmfold/session'
import { AgentError } from './agent-error.ts'
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

/** How many forks `parent`'s log has started (a fork's default id is `<parent>.fork-<n + 1>`). */
export function countForkStarts(parent: Session): number {
  let forks = 0
  for (const event of parent.events) if (event.type === 'agent/fork-start') forks += 1
  return forks
}

/** Whether the store holds session `id` (any failure but `NOT_FOUND` is thrown). */
export async function sessionExists(ctx: Context, id: string): Promise<boolean> {
  return ctx.sessions.read(id).then(
    () => true,
    (error: unknown) => {
      if (SessionError.isInstance(error) && error.code === 'NOT_FOUND') return false
      throw error
    },
  )
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
  const { parentSessionId, parentSeq, header, cacheSessionId, tools, cacheTtl } = lineage
  session.unit(() => {
    session.append('agent/fork', {
      parentSessionId,
      parentSeq,
      header,
      cacheSessionId,
      ...(tools === undefined ? {} : { tools: [...tools] }),
      ...(cacheTtl === undefined ? {} : { cacheTtl }),
    })
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
    const child = await ctx.sessions.read(childId).catch((error: unknown) => {
      if (SessionError.isInstance(error) && error.code === 'NOT_FOUND') return undefined
      throw error
    })
    const end = child ? firstTurnEnd(child) : undefined
    if (end === 'stop' && child) {
      session.append('agent/fork-end', { childSessionId: childId, reason: 'finished', answer: lastAnswer(child) ?? '' })
    } else {
      const why = !child
        ? 'its session was never written'
        : end === undefined
          ? 'its turn never ended'
          : `its turn ended with reason ${end}`
      session.append('agent/fork-end', {
        childSessionId: childId,
        reason: 'failed',
        error: `the process running this fork ended before the fork did (${why}); settled when the parent was resumed`,
      })
    }
  }
}

/** The reason on the fork's first `turn/end` (its task's turn), if it ended. */
function firstTurnEnd(child: Session): string | undefined {
  for (const event of child.events) if (event.type === 'turn/end') return event.data.reason
  return undefined
}
