import type { Context } from '@cordisjs/core'
import type { AgentStatus, PreStepContext, RequestErrorAction, RequestErrorContext } from '@warmfold/agent-loop'
import type { CompactionEngine } from '@warmfold/compaction'
import { LlmError } from '@warmfold/llm'
import type { AnySessionEvent, Session } from '@warmfold/session'
import type { BasicCompactionConfig } from './compaction-policy.ts'
import { resolvePolicy } from './compaction-policy.ts'
import { compactionState } from './session-compaction-state.ts'

/**
 * The automatic listeners (`auto: true`): pressure before every step, overflow recovery on
 * `CONTEXT_WINDOW_EXCEEDED`, and the overflow counter's resets. Registered on the engine's own
 * context, so they go away with the engine.
 */
export function installCompactionListeners(ctx: Context, engine: CompactionEngine, config: BasicCompactionConfig): void {
  // A config problem fails the same way before every step; say it once per session and cause.
  const warned = new WeakMap<Session, Set<string>>()
  ctx.on('agent/pre-step', async ({ agent, signal }: PreStepContext) => {
    if (signal.aborted) return
    try {
      await engine.compactIfNeeded(agent, 'pressure', signal)
    } catch (error) {
      // Compaction never fails a step; the warning names the cause (usually a config problem).
      const message = (error as Error).message
      const seen = warned.get(agent.session) ?? new Set<string>()
      warned.set(agent.session, seen)
      if (seen.has(message)) return
      seen.add(message)
      ctx.emit('internal/warning', `compaction of session ${agent.session.id} failed; continuing the step (said once per session): ${message}`)
    }
  })
  ctx.on('agent/request-error', async ({ agent, error, signal }: RequestErrorContext): Promise<RequestErrorAction | undefined> => {
    if (!LlmError.isInstance(error) || error.code !== 'CONTEXT_WINDOW_EXCEEDED' || signal.aborted) return
    const session = agent.session
    const header = session.requestHeader()
    if (!header) return
    const state = compactionState(session)
    if (state.overflowRetries >= resolvePolicy(config, header.config.provider, header.config.model).maxOverflowRetries) return
    const before = ctx.tokenMeter.measure(session).surfaceTokens
    const generation = session.surface.replaceGeneration
    try {
      await engine.compactIfNeeded(agent, 'context-overflow', signal)
    } catch (failure) {
      ctx.emit('internal/warning', `overflow recovery of session ${session.id} failed: ${(failure as Error).message}`)
    }
    // Retry only on durable progress: a replacement landed and the surface really shrank.
    if (signal.aborted || session.surface.replaceGeneration === generation) return
    if (ctx.tokenMeter.measure(session).surfaceTokens >= before) return
    state.overflowRetries += 1
    return { retry: true }
  })
  ctx.on('agent/status', (agent, status: AgentStatus) => {
    if (status === 'idle') compactionState(agent.session).overflowRetries = 0
  })
  ctx.on('session/event', (session: Session, event: AnySessionEvent) => {
    if (event.type === 'assistant/message') compactionState(session).overflowRetries = 0
  })
}
