import { createHash } from 'node:crypto'

/**
 * The bytes a wire message is keyed and compared by: its JSON with binary data (`Uint8Array`) as
 * `{ base64 }` and URLs as their text, keys in the order the message was written (an SDK that
 * converts a host's messages the same way on every call gives the same text for the same message).
 * Cached per message object: one call keys, prices and fingerprints the same messages several times.
 */
export function messageText(message: object): string {
  let text = texts.get(message)
  if (text === undefined) {
    text = JSON.stringify(message, (_key, value: unknown) => {
      if (value instanceof Uint8Array) return { base64: Buffer.from(value).toString('base64') }
      if (value instanceof URL) return value.href
      return value
    })
    texts.set(message, text)
  }
  return text
}

const texts = new WeakMap<object, string>()

/**
 * Chained SHA-256 digests (hex) of every prefix of `prompt`, by {@link messageText}: `digests[k]`
 * identifies `prompt[0..k)` (so `digests[0]` is the empty prefix). Two prompts share their first
 * k messages byte for byte exactly when their `digests[k]` agree. The chain's seed is fixed
 * (`warmfold/ai-sdk prefix`): the AI SDK bridge stores these digests with its folds.
 */
export function prefixDigests(prompt: readonly object[]): string[] {
  const digests = [createHash('sha256').update('warmfold/ai-sdk prefix').digest('hex')]
  for (const message of prompt)
    digests.push(
      createHash('sha256')
        .update(digests.at(-1) as string)
        .update(messageText(message))
        .digest('hex'),
    )
  return digests
}
