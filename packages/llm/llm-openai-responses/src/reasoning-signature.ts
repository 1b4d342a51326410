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
  const fields = signatureFields(signature, REASONING_SIGNATURE_FORMAT)
  if (!fields) return undefined
  const { id, encrypted_content: encrypted, summary } = fields
  const valid =
    typeof id === 'string' &&
    (encrypted === null || typeof encrypted === 'string') &&
    Array.isArray(summary) &&
    summary.every((part) => part?.type === 'summary_text' && typeof part.text === 'string')
  return valid ? { id, encrypted_content: encrypted, summary: summary as ReasoningSummaryPart[] } : undefined
}

/** The fields of `signature` when it is a JSON object with the `format` tag this adapter writes. */
export function signatureFields(signature: string | undefined, format: string): Record<string, unknown> | undefined {
  if (!signature?.startsWith('{')) return undefined
  try {
    const value = JSON.parse(signature) as Record<string, unknown>
    return value.format === format ? value : undefined
  } catch {
    return undefined // Not ours.
  }
}
