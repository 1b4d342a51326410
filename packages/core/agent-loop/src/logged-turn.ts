import type { Context } from '@cordisjs/core'
import type { Message } from '@warmfold/llm'
import { describe } from './agent-error.ts'
import type { TurnAgent, TurnOutcome, TurnProgress } from './run-turn.ts'
import { runTurn } from './run-turn.ts'
import type { TurnResult } from './turn-result.ts'

/** A queued user message and the settle function of the promise its `followup` returned. */
export interface QueuedMessage {
  readonly message: Message
  readonly settle: (result: TurnResult) => void
}

/**
 * Resolves the `followup` promises of messages handed back unsent (with the failure that
 * stopped them) and returns the messages, for `AgentError.unsent`.
 */
export function handBack(
  queued: readonly QueuedMessage[],
  error = 'the turn loop failed before this message started a turn',
  cause?: unknown,
): Message[] {
  for (const { settle } of queued) settle({ reason: 'unsent', steps: 0, errorCode: 'LOG_FAILED', error, cause })
  return queued.map(({ message }) => message)
}

/** How a turn went, with its log. */
export interface LoggedTurn {
  /** The turn's result; absent when its message was handed back unsent. */
  readonly result?: TurnResult
  /** The `turn/start` was logged (a turn number was used). */
  readonly started: boolean
  /** What the log could not record (a refused append, a failed flush): the queue stops. */
  readonly lost?: { readonly cause: unknown; readonly what: string; readonly messageUnsent: boolean }
}

/**
 * Runs turn `turn` of `agent` for `message` between its `turn/start` and `turn/end` (with the
 * user message logged first), then flushes. A failure inside the turn ends it with reason `error`
 * and the cause; a failure the log cannot record is returned as `lost`. A refused `turn/start`
 * is returned at once, not as a promise: the queue is handed back before a followup queued after
 * this one joins it.
 */
export function runLoggedTurn(
  ctx: Context,
  agent: TurnAgent,
  turn: number,
  message: Message,
  signal: AbortSignal,
): LoggedTurn | Promise<LoggedTurn> {
  try {
    agent.session.append('turn/start', { turn })
  } catch (error) {
    return { started: false, lost: { cause: error, what: 'logging the start', messageUnsent: true } }
  }
  return runStartedTurn(ctx, agent, turn, message, signal)
}

/** {@link runLoggedTurn} once its `turn/start` is logged. */
async function runStartedTurn(
  ctx: Context,
  agent: TurnAgent,
  turn: number,
  message: Message,
  signal: AbortSignal,
): Promise<LoggedTurn> {
  const session = agent.session
  const progress: TurnProgress = { step: 0 }
  const failed = (error: unknown, what = describe(error)): TurnOutcome => ({
    reason: 'error',
    steps: progress.step,
    errorCode: errorCode(error),
    error: what,
    cause: error,
  })
  let messageError: unknown
  try {
    session.append('user/message', { message }, 'append')
  } catch (error) {
    messageError = error ?? new Error('the append threw nothing')
  }
  const unsent = messageError !== undefined
  const outcome = unsent
    ? failed(messageError, `the user message could not be logged: ${describe(messageError)}`)
    : // An append refused mid-turn (a validator, a closed session), a failed flush or a hook that
      // threw: the turn ends here with the cause, and the log says so if it still can.
      await runTurn(ctx, agent, turn, signal, progress).catch((error: unknown) => failed(error))
  const kept = unsent ? {} : { result: { turn, ...outcome } }
  const lost = (cause: unknown, what: string): LoggedTurn => ({
    started: true,
    ...kept,
    lost: { cause, what, messageUnsent: unsent },
  })
  try {
    // The failure's code and words are logged; the thrown value (`cause`) stays out of the log.
    const { reason, steps } = outcome
    session.append('turn/end', { turn, reason, steps, errorCode: outcome.errorCode, error: outcome.error })
  } catch (error) {
    return lost(error, `logging the end (${outcome.reason}${outcome.error ? `: ${outcome.error}` : ''})`)
  }
  try {
    await ctx.sessions.flush(session)
  } catch (error) {
    return lost(error, 'flushing the session at the end')
  }
  return unsent ? lost(messageError, 'logging the user message') : { started: true, ...kept }
}

/** The code a failure carries (`SessionError`, `LlmError`, a Node errno), else `UNEXPECTED`. */
function errorCode(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' && code !== '' ? code : 'UNEXPECTED'
}
