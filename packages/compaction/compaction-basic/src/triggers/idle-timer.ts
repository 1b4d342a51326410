import type { Context } from '@cordisjs/core'
import type { AgentHandle, AgentStatus, RequestHookContext, ResumeContext } from '@warmfold/agent-loop'
import type { CompactionAgent } from '@warmfold/compaction'
import type { RequestHeader, Session } from '@warmfold/session'
import type { ResolvedIdleCompaction } from '../config/idle-compaction-config.ts'

/** What the idle scheduler needs of the engine. */
export interface IdleCompactionEngine {
  /**
   * Starts the idle fold beside whatever comes next: the largest head of the last sent request,
   * summarized while the cache is still warm, swapped in while the agent is idle or at the next
   * request boundary (a user who comes back meanwhile does not throw the summary away).
   */
  startIdleFold(agent: CompactionAgent): Promise<void>
  /**
   * The compaction threshold of the request `header` starts, and its model's cache TTL (none: never
   * expires, or unknown).
   */
  idleTarget(
    session: Session,
    header: RequestHeader,
  ): Promise<{ readonly thresholdTokens: number; readonly ttlMs?: number }>
  requestTokens(session: Session): number
}

/** What the scheduler knows of a session since its last conversation request. */
interface IdleEntry {
  /** When the last conversation request was built (clock time): the cache entry's TTL runs from here. */
  readonly requestAt: number
  readonly thresholdTokens: number
  readonly ttlMs?: number
  /** An idle compaction was tried for this request: none again until the next one. */
  spent: boolean
  cancel?: () => void
}

/**
 * Schedules the idle compaction of `engine`: when an agent goes idle (`agent/status` `idle`)
 * with its request at or above `minPressure` × the threshold, a timer fires at the last
 * request's time + the model's cache TTL − `marginMs` and starts the idle fold in the background
 * (`startIdleFold`): a followup no longer aborts it; its summary is swapped in while the agent is
 * idle, or at the next request boundary. At most one attempt per conversation request. A new
 * turn, closing the session, resuming it and unloading the engine clear the timer. Listeners
 * belong to `ctx` (the engine's).
 */
export function installIdleCompaction(ctx: Context, engine: IdleCompactionEngine, idle: ResolvedIdleCompaction): void {
  const { clock } = idle
  const entries = new Map<Session, IdleEntry>()
  const clear = (session: Session) => {
    const entry = entries.get(session)
    entry?.cancel?.()
    if (entry) entry.cancel = undefined
  }
  const forget = (session: Session) => {
    clear(session)
    entries.delete(session)
  }
  /** The request size of `session`, or `undefined` when it cannot be measured (the pressure trigger says why). */
  const tokensOf = (session: Session): number | undefined => {
    try {
      return engine.requestTokens(session)
    } catch {
      return undefined
    }
  }

  ctx.on('agent/request', async ({ agent, header }: RequestHookContext) => {
    const requestAt = clock.now()
    forget(agent.session)
    try {
      entries.set(agent.session, { requestAt, ...(await engine.idleTarget(agent.session, header)), spent: false })
    } catch {
      // The pressure trigger of the same step reports a config problem; an idle fold is only an optimisation.
    }
  })

  ctx.on('agent/status', (agent: AgentHandle, status: AgentStatus) => {
    if (status !== 'idle') return clear(agent.session)
    const entry = entries.get(agent.session)
    if (!entry || entry.spent || entry.cancel || entry.ttlMs === undefined || agent.session.isClosed) return
    const now = clock.now()
    // Already cold: a fold now would be prefilled in full, which is what it is meant to avoid.
    if (now >= entry.requestAt + entry.ttlMs) return
    const tokens = tokensOf(agent.session)
    if (tokens === undefined || tokens < idle.minPressure * entry.thresholdTokens) return
    const delay = Math.max(0, entry.requestAt + entry.ttlMs - idle.marginMs - now)
    entry.cancel = clock.setTimeout(() => fire(agent, entry), delay)
  })

  async function fire(agent: AgentHandle, entry: IdleEntry): Promise<void> {
    entry.cancel = undefined
    // The timer may fire while the loop is still winding down the turn that made the agent idle.
    await agent.whenIdle()
    if (entries.get(agent.session) !== entry || entry.spent || agent.status !== 'idle' || agent.session.isClosed) return
    entry.spent = true
    // The timer can fire late (a suspended machine, a wall-clock jump, a stalled event loop):
    // past the TTL the prefix is gone, and a fold would be prefilled in full and replace the
    // whole tail cold, which is what the idle fold exists to avoid.
    const late = clock.now() - (entry.requestAt + (entry.ttlMs as number))
    try {
      if (late >= 0) {
        if (skipCold(agent, entry, late) && !agent.session.isClosed) await ctx.sessions.flush(agent.session)
        return
      }
      const tokens = tokensOf(agent.session)
      if (tokens === undefined || tokens < idle.minPressure * entry.thresholdTokens) return
      await engine.startIdleFold(agent)
    } catch (error) {
      ctx.emit(
        'internal/warning',
        `idle compaction of session ${agent.session.id} failed: ${(error as Error)?.message ?? String(error)}`,
      )
    }
  }

  /** Logs why a late timer made no fold, and flushes it (the agent is idle: nothing else will). */
  function skipCold(agent: AgentHandle, entry: IdleEntry, lateMs: number): boolean {
    const totalTokens = tokensOf(agent.session)
    if (totalTokens === undefined) return false
    agent.session.append('compaction/failure', {
      trigger: 'idle',
      reason:
        `the idle fold's timer fired ${Math.round(lateMs / 1000)} s after the cache TTL ran out (a suspended ` +
        'machine, a clock jump or a stalled event loop); a fold now would be prefilled in full, so none was made',
      totalTokens,
      thresholdTokens: entry.thresholdTokens,
    })
    return true
  }

  ctx.on('session/close', (session: Session) => forget(session))
  // A resumed agent starts without a timer: the one armed for the previous agent is stale.
  ctx.on('agent/resume', ({ agent }: ResumeContext) => {
    for (const session of entries.keys()) if (session.id === agent.session.id) forget(session)
  })
  ctx.effect(() => () => {
    for (const session of entries.keys()) forget(session)
  })
}
