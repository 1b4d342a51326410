import type { SharedV3ProviderMetadata, SharedV3ProviderOptions } from '@ai-sdk/provider'
import { canonicalJson } from '@warmfold/llm'
import { unsendable } from '@warmfold/llm/adapter'

/**
 * The opaque `signature` of a block streamed by an AI SDK model: the provider metadata the block
 * arrived with (merged over its start, deltas and end), as canonical JSON, e.g.
 * `{"anthropic":{"signature":"…"}}`. `undefined` when the block carried none. Replayed, it is
 * parsed back into the part's `providerOptions`, which is where every AI SDK provider reads
 * replayable metadata (Anthropic `signature`/`redactedData`, OpenAI `itemId` and
 * `reasoningEncryptedContent`, Google `thoughtSignature`).
 */
export function encodeSignature(
  metadata: SharedV3ProviderMetadata | Record<string, Record<string, unknown>> | undefined,
): string | undefined {
  if (!metadata) return undefined
  const kept = Object.fromEntries(
    Object.entries(metadata).filter(([, value]) => value && Object.keys(value).length > 0),
  )
  return Object.keys(kept).length ? canonicalJson(kept as never) : undefined
}

/**
 * Parses a signature written by {@link encodeSignature}. A signature that is not such JSON (one
 * written by another adapter) is not this adapter's to replay and yields `undefined`.
 */
export function decodeSignature(
  signature: string | undefined,
  where: string,
  provider: string,
): SharedV3ProviderOptions | undefined {
  if (signature === undefined || signature === '' || !signature.startsWith('{')) return undefined
  try {
    const value: unknown = JSON.parse(signature)
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as SharedV3ProviderOptions
  } catch {
    throw unsendable(provider, `${where} holds a block signature that is not the JSON this adapter writes`)
  }
  return undefined
}

/** Merges provider metadata per provider key (later values win), as a block's parts arrive. */
export function mergeMetadata(
  into: Record<string, Record<string, unknown>>,
  metadata: SharedV3ProviderMetadata | undefined,
): void {
  if (!metadata) return
  for (const [name, values] of Object.entries(metadata)) into[name] = { ...into[name], ...values }
}
