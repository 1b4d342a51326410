import type { Context } from '@cordisjs/core'
import type { Message } from '@warmfold/llm'
import { isToolResultMessage, textOf } from '@warmfold/llm'
import type { Session } from '@warmfold/session'
import { SessionError } from '@warmfold/session'
import { AgentError, describe } from './agent-error.ts'
import type { ForkLineage } from './fork-lineage.ts'

/** Session `id` as the store holds it, or `undefined` when there is none (any other failure is thrown). */
export function readStored(ctx: Context, id: string): Promise<Session | undefined> {
  return ctx.sessions.read(id).catch((error: unknown) => {
    if (SessionError.isInstance(error) && error.code === 'NOT_FOUND') return undefined
    throw error
  })
}

/** The refusal of a fork into session `childId`, which exists (or is being made) already. */
export function childExists(parentId: string, childId: string, cause?: unknown): AgentError {
  return new AgentError(
    'FORK_REFUSED',
    `agent ${parentId} cannot fork into session ${childId}: it exists already (pass another sessionId)`,
    { cause },
  )
}

/**
 * Creates the fork's session and writes, in one unit, its `agent/fork` event and the replayed
 * messages (the parent's last request, byte for byte), then flushes it. When the store refuses
 * part of it (a validator, a failed flush), the half-made session is deleted before the error is
 * thrown, so a failed fork leaves no child behind.
 * @throws AgentError `FORK_REFUSED` when the session exists (or another writer holds its id);
 *   whatever the store threw otherwise, with what became of the half-made session in its message.
 */
export async function createForkSession(
  ctx: Context,
  childId: string,
  lineage: Omit<ForkLineage, 'tools'> & { tools?: readonly string[] },
  messages: readonly Message[],
): Promise<Session> {
  const session = await ctx.sessions.create(childId).catch((error: unknown) => {
    const taken = SessionError.isInstance(error) && (error.code === 'EXISTS' || error.code === 'LOCKED')
    throw taken ? childExists(lineage.parentSessionId, childId, error) : error
  })
  try {
    session.unit(() => {
      // An absent `tools` or `cacheTtl` is left out of the logged event (it is stored as JSON).
      session.append('agent/fork', { ...lineage, tools: lineage.tools && [...lineage.tools] })
      for (const message of messages) appendReplayed(session, message)
    })
    await ctx.sessions.flush(session)
  } catch (error) {
    const deleted = await ctx.sessions.delete(session).then(
      () => 'it was deleted',
      (failure: unknown) => `deleting it failed too: ${describe(failure)}`,
    )
    throw new Error(`writing the fork's session ${childId} failed (${deleted}): ${describe(error)}`, { cause: error })
  }
  return session
}

/** Logs one replayed message as the surface event that carries its kind. */
function appendReplayed(session: Session, message: Message): void {
  if (message.role === 'assistant') session.append('assistant/message', { message }, 'append')
  else if (isToolResultMessage(message)) session.append('tool/result', { message }, 'append')
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

/** The `n` of a default fork id `<parentId>.fork-<n>`, or `undefined` for any other id. */
export function forkNumberOf(parentId: string, childId: string): number | undefined {
  const prefix = `${parentId}.fork-`
  const number = childId.startsWith(prefix) ? Number(childId.slice(prefix.length)) : Number.NaN
  return Number.isSafeInteger(number) && number > 0 ? number : undefined
}

/**
 * The number of the first fork a `session` agent makes in this process (`<id>.fork-<n>`): one
 * past the forks its log started, or past the highest default number among them when that is
 * higher (numbers skipped by refused forks, or taken by a fork given such an id), so a resumed
 * parent goes on numbering where the last process stopped and never names a child that exists.
 */
export function nextForkNumber(session: Session): number {
  let started = 0
  let highest = 0
  for (const event of session.events) {
    if (event.type !== 'agent/fork-start') continue
    started += 1
    highest = Math.max(highest, forkNumberOf(session.id, event.data.childSessionId) ?? 0)
  }
  return Math.max(started, highest) + 1
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
