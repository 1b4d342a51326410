import type { Message } from '@warmfold/llm'
import { integerRange } from '@warmfold/llm'
import { SESSION_ID_PATTERN } from '@warmfold/session'
import { bad, check } from './agent-options.ts'
import type { TurnResult } from './turn-result.ts'

/** Options of `agent.fork(options)`. */
export interface ForkOptions {
  /** The task: the one message the child's first request adds to the parent's last request. */
  readonly task: string | Message
  /**
   * The child's session id; default `<parent id>.fork-<n>` (`n` numbers the parent's forks from 1,
   * never reused, also across a resume). The session must not exist yet.
   */
  readonly sessionId?: string
  /**
   * Names of the tools the child may call; default every tool. The others stay in the request
   * (removing one would change the tools, and so the prefix, from the first tool on) and a call
   * to one gets an error tool result naming the tool and why it was refused.
   */
  readonly tools?: readonly string[]
  /**
   * Wait, before sending, until the first fork taken from the same parent request has begun to
   * answer (its first streamed chunk): a provider holds no entry before that, so a sibling sent
   * earlier would prefill the whole prefix again. Default true; the wait ends early when that
   * fork fails.
   */
  readonly siblingsWaitForFirst?: boolean
  /**
   * `short` (default): the child's requests ask for the provider's shortest cache lifetime for
   * what they write (`GenerateOptions.cacheTtl`; Anthropic: 5 minutes instead of a 1-hour model
   * TTL), since nothing reads a one-shot child's entries after it ends; `inherit`: the model's.
   */
  readonly cacheTtl?: 'short' | 'inherit'
  /** Steps of the child's turn; default the parent's `maxSteps`. */
  readonly maxSteps?: number
  /** Cancels the child's turn (it ends with reason `aborted`, and the fork as failed). */
  readonly signal?: AbortSignal
}

/** What became of a fork. `agent.fork` resolves with it once the child's turn has ended. */
export interface ForkResult {
  /** The child's session id. */
  readonly sessionId: string
  /** `finished`: the child's turn ended with a final answer (reason `stop`); `failed` otherwise. */
  readonly reason: 'finished' | 'failed'
  /** The text of the child's final assistant message (`finished` only). */
  readonly answer?: string
  /** Why the fork failed, in words (`failed` only). */
  readonly error?: string
  /** The child's turn, as its `followup` returned it. */
  readonly turn: TurnResult
}

/**
 * Checks fork options.
 * @throws TypeError naming the option and the bad value.
 */
export function validateForkOptions(options: ForkOptions): void {
  const task = options?.task
  if (
    typeof task === 'string'
      ? task === ''
      : typeof task !== 'object' || task === null || (task as Message).role !== 'user'
  ) {
    throw bad('task', 'must be a non-empty string or a user message', task, 'fork')
  }
  if (
    options.sessionId !== undefined &&
    (typeof options.sessionId !== 'string' || !SESSION_ID_PATTERN.test(options.sessionId))
  ) {
    throw bad('sessionId', `must match ${SESSION_ID_PATTERN}`, options.sessionId, 'fork')
  }
  if (
    options.tools !== undefined &&
    (!Array.isArray(options.tools) || options.tools.some((name) => typeof name !== 'string'))
  ) {
    throw bad('tools', 'must be an array of tool names', options.tools, 'fork')
  }
  if (options.siblingsWaitForFirst !== undefined && typeof options.siblingsWaitForFirst !== 'boolean') {
    throw bad('siblingsWaitForFirst', 'must be a boolean', options.siblingsWaitForFirst, 'fork')
  }
  if (options.cacheTtl !== undefined && options.cacheTtl !== 'short' && options.cacheTtl !== 'inherit')
    throw bad('cacheTtl', "must be 'short' or 'inherit'", options.cacheTtl, 'fork')
  if (options.maxSteps !== undefined) check('maxSteps', options.maxSteps, integerRange(1), 'fork')
}
