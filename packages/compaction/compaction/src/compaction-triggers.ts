import type { Context } from '@cordisjs/core'
import type {
  AgentHandle,
  AgentStatus,
  PreStepContext,
  RequestErrorAction,
  RequestErrorContext,
} from '@warmfold/agent-loop'
import { MissingServiceError } from '@warmfold/agent-loop'
import { canonicalJson, LlmError, promptView } from '@warmfold/llm'
import type { AnySessionEvent, Session } from '@warmfold/session'
import type { CompactionAgent } from './compaction-agent.ts'
import type { CompactionResult, CompactionTrigger } from './compaction-events.ts'

/** What the triggers call: an engine's automatic policy (every `CompactionEngine` fits). */
export interface TriggeredEngine {
  compactIfNeeded(
    agent: CompactionAgent,
    trigger: CompactionTrigger,
    signal?: AbortSignal,
  ): Promise<CompactionResult | null>
}

/** The policy the triggers leave to the engine. */
export interface CompactionTriggerPolicy {
  /**
   * Retries of one step the overflow trigger may grant `agent` after `CONTEXT_WINDOW_EXCEEDED`,
   * until the agent goes idle or a new assistant message lands; each only after a recovery that
   * really shrank the surface. `0` turns overflow recovery off. Default
   * {@link DEFAULT_MAX_OVERFLOW_RETRIES}.
   */
  maxOverflowRetries(agent: CompactionAgent): number
  /**
   * The size of `session`'s surface in any unit that grows with the prompt, compared before and
   * after an overflow recovery. Default {@link surfaceCharacters}.
   */
  surfaceSize(session: Session): number
}

/** Default of {@link CompactionTriggerPolicy.maxOverflowRetries}. */
export const DEFAULT_MAX_OVERFLOW_RETRIES = 1

/** Characters of the canonical prompt view of the session's messages: a size every engine can compute. */
export function surfaceCharacters(session: Session): number {
  return session.deriveMessages().reduce((sum, message) => sum + canonicalJson(promptView(message)).length, 0)
}

/**
 * Wires an engine to the agent loop's hooks on `ctx`, so listeners go away with the plugin that
 * owns `ctx` (the engine's):
 *
 * - `agent/pre-step`: `compactIfNeeded(agent, 'pressure', signal)` before every step. A failure
 *   never fails the step: it is reported once per session and message as an `internal/warning`.
 *   Only a {@link MissingServiceError} (the engine needs a service nobody mounted) fails it: it
 *   is reported as an `internal/error` once per service and ends the turn with
 *   `errorCode: 'SERVICE_MISSING'`, so a forgotten plugin cannot go unnoticed.
 * - `agent/request-error` with `CONTEXT_WINDOW_EXCEEDED`: `compactIfNeeded(agent,
 *   'context-overflow', signal)`, and a retry of the step only when a surface replacement landed
 *   and `surfaceSize` really shrank, at most `maxOverflowRetries` times until the agent goes
 *   idle or answers again.
 *
 * `CompactionEngine` calls this from its constructor; an engine that opts out may call it itself.
 */
export function installCompactionTriggers(
  ctx: Context,
  engine: TriggeredEngine,
  policy: Partial<CompactionTriggerPolicy> = {},
): void {
  const maxOverflowRetries = policy.maxOverflowRetries ?? (() => DEFAULT_MAX_OVERFLOW_RETRIES)
  const surfaceSize = policy.surfaceSize ?? surfaceCharacters
  const overflowRetries = new WeakMap<Session, number>()
  // A config problem fails the same way before every step; say it once per session and cause.
  const warned = new WeakMap<Session, Set<string>>()
  const missing = new Set<string>()

  /** Reports a missing service once and rethrows it; other failures are returned to the caller. */
  const escalate = (error: unknown): void => {
    if (!MissingServiceError.isInstance(error)) return
    if (!missing.has(error.service)) {
      missing.add(error.service)
      ctx.emit('internal/error', error)
    }
    throw error
  }

  ctx.on('agent/pre-step', async ({ agent, signal }: PreStepContext) => {
    if (signal.aborted) return
    try {
      await engine.compactIfNeeded(agent, 'pressure', signal)
    } catch (error) {
      escalate(error)
      // Compaction never fails a step; the warning names the cause (usually a config problem).
      const message = (error as Error)?.message ?? String(error)
      const seen = warned.get(agent.session) ?? new Set<string>()
      warned.set(agent.session, seen)
      if (seen.has(message)) return
      seen.add(message)
      ctx.emit(
        'internal/warning',
        `compaction of session ${agent.session.id} failed; continuing the step (said once per session): ${message}`,
      )
    }
  })

  ctx.on(
    'agent/request-error',
    async ({ agent, error, signal }: RequestErrorContext): Promise<RequestErrorAction | undefined> => {
      if (!LlmError.isInstance(error) || error.code !== 'CONTEXT_WINDOW_EXCEEDED' || signal.aborted) return
      const session = agent.session
      const granted = overflowRetries.get(session) ?? 0
      if (granted >= maxOverflowRetries(agent)) return
      let before: number
      try {
        before = surfaceSize(session)
      } catch (failure) {
        escalate(failure)
        throw failure
      }
      const generation = session.surface.replaceGeneration
      try {
        await engine.compactIfNeeded(agent, 'context-overflow', signal)
      } catch (failure) {
        escalate(failure)
        ctx.emit(
          'internal/warning',
          `overflow recovery of session ${session.id} failed: ${(failure as Error)?.message ?? String(failure)}`,
        )
      }
      // Retry only on durable progress: a replacement landed and the surface really shrank.
      if (signal.aborted || session.surface.replaceGeneration === generation) return
      if (surfaceSize(session) >= before) return
      overflowRetries.set(session, granted + 1)
      return { retry: true }
    },
  )

  ctx.on('agent/status', (agent: AgentHandle, status: AgentStatus) => {
    if (status === 'idle') overflowRetries.delete(agent.session)
  })
  ctx.on('session/event', (session: Session, event: AnySessionEvent) => {
    if (event.type === 'assistant/message') overflowRetries.delete(session)
  })
}
