import type { Message } from '@warmfold/llm'

/** A message with the seq of the session event that logged it (`user/message`, `assistant/message`, `tool/result`). */
export interface LoggedMessage {
  readonly seq: number
  readonly message: Message
}

/**
 * Checks that `messages` is a list of `{ seq, message }` in log order (seqs are non-negative
 * integers, strictly increasing) and returns it.
 * @throws TypeError naming the entry and `where` it was passed.
 */
export function checkLoggedMessages(messages: unknown, where: string): readonly LoggedMessage[] {
  if (!Array.isArray(messages))
    throw new TypeError(
      `${where} must be an array of { seq, message }, got ${messages === null ? 'null' : typeof messages}`,
    )
  let previous = -1
  for (const [index, entry] of messages.entries()) {
    const candidate = entry as Partial<LoggedMessage> | null
    if (candidate === null || typeof candidate !== 'object')
      throw new TypeError(`${where}[${index}] must be { seq, message }, got ${JSON.stringify(entry)}`)
    const { seq, message } = candidate
    if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 0)
      throw new TypeError(`${where}[${index}].seq must be a non-negative integer, got ${JSON.stringify(seq)}`)
    if (seq <= previous)
      throw new TypeError(
        `${where}[${index}].seq ${seq} must be greater than the seq before it (${previous}): ` +
          'pass messages in log order',
      )
    if (
      message === null ||
      typeof message !== 'object' ||
      !Array.isArray(message.content) ||
      typeof message.role !== 'string'
    ) {
      throw new TypeError(`${where}[${index}].message (seq ${seq}) must be a Message with a role and content blocks`)
    }
    previous = seq
  }
  return messages as readonly LoggedMessage[]
}
