import type { Context } from '@cordisjs/core'
import { AgentError } from './agent-error.ts'

/**
 * The abort controller of one turn or maintenance task of the agent on session `sessionId`: it
 * aborts when the agent loop unloads (its plugin disposed, or its context stopped), so the turn
 * ends `aborted` at once, its request and tools stop, instead of running on against unloaded
 * services (a request nobody waits for would keep the process alive). `release` stops watching
 * once the task is over.
 */
export function abortOnUnload(ctx: Context, sessionId: string): { controller: AbortController; release(): void } {
  const controller = new AbortController()
  const abort = () =>
    controller.abort(new AgentError('CLOSED', `agent for session ${sessionId}: the agent loop was unloaded`))
  try {
    return { controller, release: ctx.on('dispose', abort) }
  } catch {
    // Unloaded already (cordis refuses a listener on an inactive plugin): nothing may start.
    abort()
    return { controller, release: () => {} }
  }
}
