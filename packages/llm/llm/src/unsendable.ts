import type { AdapterCallContext } from './adapter-call-context.ts'
import { LlmError } from './llm-error.ts'

/** The error for a request an adapter cannot send: `INVALID_REQUEST`, not retryable, `cannot send to <provider>: …`. */
export function unsendable(provider: string, message: string): LlmError {
  return new LlmError('INVALID_REQUEST', `cannot send to ${provider}: ${message}`, { provider, retryable: false })
}

/** The {@link unsendable} error for a block of `type` in `messages[position]`, whose `role` cannot carry it. */
export function misplacedBlock(provider: string, position: number, role: 'user' | 'assistant', type: string): LlmError {
  const other = role === 'user' ? 'an assistant' : 'a user'
  return unsendable(
    provider,
    `messages[${position}] (${role}) holds a block of type ${type}, which only ${other} message can carry`,
  )
}

/**
 * `UNSUPPORTED_REASONING_EFFORT` (not retryable) for an effort the model's table has no `setting`
 * for: `reasoningEffort "<effort>" has no <setting> for <provider>/<model>; known efforts: <known>`.
 */
export function unsupportedEffort(call: AdapterCallContext, effort: string, setting: string, known: string): LlmError {
  return new LlmError(
    'UNSUPPORTED_REASONING_EFFORT',
    `reasoningEffort "${effort}" has no ${setting} for ${call.provider}/${call.model}; known efforts: ${known}`,
    { provider: call.provider, retryable: false },
  )
}
