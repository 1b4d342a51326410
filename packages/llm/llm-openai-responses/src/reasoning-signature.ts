/** The `format` tag of a reasoning signature written by this adapter. */
export const REASONING_SIGNATURE_FORMAT = 'openai-responses/reasoning@1'

/** One summary part of a reasoning item, as the API sent it. */
export interface ReasoningSummaryPart {
  readonly type: 'summary_text'
  readonly text: string
}

/** What a reasoning item's signature holds. */
export interface ReasoningSignature {
  /** The item's id (`rs_…`), kept for tracing; a stateless replay does not send it. */
  readonly id: string
  /** The encrypted reasoning; `null` when the server sent none (the item then cannot be replayed). */
  readonly encrypted_content: string | null
  /** The summary parts exactly as received. */
  readonly summary: readonly ReasoningSummaryPart[]
}

/**
 * Encodes a streamed reasoning item as a `ReasoningBlock` signature: the JSON text of
 * `{ format, id, encrypted_content, summary }` in this key order. The value is opaque to
 * warmfold; only {@link decodeReasoningSignature} reads it.
 */
export function encodeReasoningSignature(item: ReasoningSignature): string {
  return JSON.stringify({
    format: REASONING_SIGNATURE_FORMAT,
    id: item.id,
    encrypted_content: item.encrypted_content,
    summary: item.summary.map((part) => ({ type: part.type, text: part.text })),
  })
}

/**
 * Reads a signature written by {@link encodeReasoningSignature}. Returns `undefined` for any
 * other value (another provider's signature, e.g. Anthropic's thinking signature).
 */
export function decodeReasoningSignature(signature: string | undefined): ReasoningSignature | undefined {
  if (signature === undefined || !signature.startsWith('{')) return undefined
  let value: unknown
  try {
    value = JSON.parse(signature)
  } catch {
    return undefined
  }
  if (typeof value !== 'object' || value === null) return undefined
  const { format, id, encrypted_content: encrypted, summary } = value as Record<string, unknown>
  if (
    format !== REASONING_SIGNATURE_FORMAT ||
    typeof id !== 'string' ||
    !(encrypted === null || typeof encrypted === 'string') ||
    !Array.isArray(summary)
  )
    return undefined
  if (
    !summary.every(
      (part) =>
        typeof part === 'object' && part !== null && part.type === 'summary_text' && typeof part.text === 'string',
    )
  )
    return undefined
  return { id, encrypted_content: encrypted, summary: summary as ReasoningSummaryPart[] }
}
