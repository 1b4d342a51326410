import type { LlamaContextSequence, Token } from 'node-llama-cpp'

/**
 * The minimum share of the prompt a slot's cache must match to be chosen over LRU (llama-server
 * `--slot-prompt-similarity`).
 */
export const SLOT_PROMPT_SIMILARITY = 0.1

/** A slot chosen for a prompt, with how much of the prompt its cache holds. */
export interface SlotChoice {
  readonly index: number
  readonly sequence: LlamaContextSequence
  /** Length of the common prefix of the prompt and the slot's cached tokens (before any change). */
  readonly firstDifferentIndex: number
}

/**
 * The context sequences of one llama context, used as llama-server uses its slots: a prompt goes
 * to the slot whose cached tokens share the longest prefix with it, when that prefix is at least
 * {@link SLOT_PROMPT_SIMILARITY} of the prompt; otherwise to the least recently used slot (an
 * unused slot first, then the lowest index).
 */
export class SlotPool {
  private readonly lastUsed: number[]
  private useCount = 0

  constructor(readonly sequences: readonly LlamaContextSequence[]) {
    this.lastUsed = sequences.map(() => -1)
  }

  /** Picks the slot for `tokens` and marks it used. Does not touch any cache. */
  choose(tokens: readonly Token[]): SlotChoice {
    const prefixes = this.sequences.map((sequence) => sequence.compareContextTokens([...tokens]).firstDifferentIndex)
    let chosen = -1
    let bestSimilarity = 0
    this.sequences.forEach((sequence, index) => {
      if (sequence.contextTokens.length === 0) return
      const similarity = prefixes[index]! / tokens.length
      if (similarity >= SLOT_PROMPT_SIMILARITY && similarity > bestSimilarity) {
        bestSimilarity = similarity
        chosen = index
      }
    })
    if (chosen < 0) {
      chosen = 0
      this.lastUsed.forEach((used, index) => {
        if (used < this.lastUsed[chosen]!) chosen = index
      })
    }
    this.lastUsed[chosen] = this.useCount++
    return { index: chosen, sequence: this.sequences[chosen]!, firstDifferentIndex: prefixes[chosen]! }
  }
}
