import type { Context } from '@cordisjs/core'
import type { Session } from '@warmfold/session'
import type { AgentHandle } from './agent-handle.ts'
import { settleOpenForks } from './fork-session.ts'

/**
 * The turn a previous process left open, or `undefined`: the last `turn/start` of the log
 * when no `turn/end` follows it, with the highest step the log shows for it (0 when none was
 * logged). Scans back from the end, so it costs O(events of that turn).
 */
function findInterruptedTurn(session: Session): { turn: number; steps: number } | undefined {
  let steps = 0
  for (let seq = session.length - 1; seq >= 0; seq--) {
    const event = session.eventAt(seq)
    if (!event) break
    if (event.type === 'turn/end') return undefined
    if (event.type === 'turn/start') return { turn: event.data.turn, steps }
    const step = (event.data as { step?: unknown }).step
    if (
      (event.type === 'assistant/message' || event.type === 'assistant/partial' || event.type === 'tool/result') &&
      typeof step === 'number'
    ) {
      steps = Math.max(steps, step)
    }
  }
  return undefined
}

/**
 * Makes `agent`'s resumed log consistent before its first turn: runs the `agent/resume` hook,
 * settles the forks the previous process left open, logs `turn/end { reason: 'interrupted' }`
 * for the turn it left open, and flushes.
 */
export async function closeInterruptedTurn(ctx: Context, agent: AgentHandle): Promise<void> {
  const session = agent.session
  await ctx.serial('agent/resume', { agent })
  // Inside the open turn, when there is one: a fork started from a tool call ends before it.
  await settleOpenForks(ctx, session)
  const open = findInterruptedTurn(session)
  if (open) {
    session.append('turn/end', {
      turn: open.turn,
      reason: 'interrupted',
      steps: open.steps,
      error: 'the process running this turn ended before the turn did; closed when the session was resumed',
    })
  }
  await ctx.sessions.flush(session)
}
