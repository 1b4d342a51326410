import { createHash } from 'node:crypto'
import type { LanguageModelV3Message } from '@ai-sdk/provider'

/**
 * The bytes a message is keyed and compared by: its JSON with binary file data as base64 and
 * URLs as their text, keys in the order the AI SDK wrote them (it converts a host's messages the
 * same way on every call, so the same message gives the same text).
 */
export function messageText(message: LanguageModelV3Message): string {
  // One call keys, prices and fingerprints the same message objects several times.
  let text = texts.get(message)
  if (text === undefined) {
    text = render(message)
    texts.set(message, text)
  }
  return text
}

const texts = new WeakMap<LanguageModelV3Message, string>()

function render(message: LanguageModelV3Message): string {
  return JSON.stringify(message, (_key, value: unknown) => {
    if (value instanceof Uint8Array) return { base64: Buffer.from(value).toString('base64') }
    if (value instanceof URL) return value.href
    return value
  })
}

/**
 * Chained digests of every prefix of `prompt`: `digests[k]` identifies `prompt[0..k)` (so
 * `digests[0]` is the empty prefix). Two prompts share their first k messages byte for byte
 * exactly when their `digests[k]` agree.
 */
export function prefixDigests(prompt: readonly LanguageModelV3Message[]): string[] {
  const digests = [createHash('sha256').update('warmfold/ai-sdk prefix').digest('hex')]
  for (const message of prompt) {
    digests.push(
      createHash('sha256')
        .update(digests.at(-1) as string)
        .update(messageText(message))
        .digest('hex'),
    )
  }
  return digests
}
