import type { LanguageModelV3Message } from '@ai-sdk/provider'
import type { FoldRecord } from './fold-store.ts'
import { prefixDigests } from '@warmfold/cache-ledger/prefix'

/** A prompt with every fold that matches it applied, and which folds did. */
export interface FoldedPrompt {
  readonly prompt: LanguageModelV3Message[]
  /** The records applied, in order. */
  readonly applied: readonly FoldRecord[]
}

/**
 * Applies recorded folds to `prompt`: while some record's replaced messages are exactly the
 * prompt's first messages after its leading system messages, replace it by the record's checkpoint. A fold made on an
 * already folded prompt is keyed by a prefix that starts with the earlier checkpoint, so chained
 * folds apply in the order they were made. Every later message is kept as the same object, so
 * the bytes the provider sees after the checkpoint are the host's own.
 */
export function applyFolds(prompt: readonly LanguageModelV3Message[], records: readonly FoldRecord[]): FoldedPrompt {
  let current = prompt.slice()
  const applied: FoldRecord[] = []
  // Each application shortens the prompt, and a record matches at most once per pass.
  for (let pass = 0; pass <= records.length; pass++) {
    const kept = leadingSystemMessages(current)
    const digests = prefixDigests(current.slice(kept))
    // The longest replaced prefix wins: it is the fold made last on this history.
    let match: FoldRecord | undefined
    for (const record of records) {
      if (
        applied.includes(record) ||
        record.prefixLength >= digests.length ||
        digests[record.prefixLength] !== record.prefixDigest
      )
        continue
      if (!match || record.prefixLength > match.prefixLength) match = record
    }
    if (!match) break
    current = [...current.slice(0, kept), match.checkpoint, ...current.slice(kept + match.prefixLength)]
    applied.push(match)
  }
  return { prompt: current, applied }
}

/** Number of system messages at the start of `prompt` (they stay in place when a fold applies). */
export function leadingSystemMessages(prompt: readonly LanguageModelV3Message[]): number {
  let count = 0
  while (count < prompt.length && prompt[count]!.role === 'system') count++
  return count
}
