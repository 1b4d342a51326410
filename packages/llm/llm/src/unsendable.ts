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
