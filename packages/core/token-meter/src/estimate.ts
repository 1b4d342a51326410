import type { ContentBlock, Message, ToolDefinition } from '@warmfold/llm'
import { canonicalJson } from '@warmfold/llm'

/** UTF-16 code units per token in the default heuristic: `ceil(text.length / 4)`. */
export const CHARS_PER_TOKEN = 4

/** Tokens added once per message for its role marker and message framing. */
export const ROLE_OVERHEAD = 4

/**
 * Tokens added per text, reasoning, tool-call and tool-result block (and for a non-empty
 * system prompt or tool list) for the framing a provider's chat template wraps around it.
 */
export const BLOCK_OVERHEAD = 4

/**
 * Fixed price of one image block, in tokens, whatever its size. Providers charge images by
 * pixel tiles, which the base64 text length does not reflect; 1000 is roughly a 1 megapixel
 * image on current providers and errs high for thumbnails, which is the safe side for a meter
 * that decides when to compact.
 */
export const IMAGE_TOKENS = 1000

/**
 * Counts the tokens of one text. Must return a finite number `>= 0`; fractional results are
 * rounded up by {@link createTextCounter}.
 */
export type TextTokenCounter = (text: string) => number

/**
 * The default text price: `ceil(text.length / 4)`, counting UTF-16 code units (so an astral
 * character such as an emoji counts 2). `0` for the empty string.
 */
export function heuristicTextTokens(text: string): number {
  return Math.ceil(text.length / CHARS_PER_TOKEN)
}

/**
 * The text price a meter uses: `tokenizer` when given, else {@link heuristicTextTokens}.
 *
 * A tokenizer result is checked on every call: a non-number, a non-finite number or a
 * negative number throws a `RangeError` naming the returned value. A fractional result is
 * rounded up, so every price is a whole number and the meter's running sums (which add and
 * subtract prices as the surface changes) stay exact.
 */
export function createTextCounter(tokenizer?: TextTokenCounter): TextTokenCounter {
  if (!tokenizer) return heuristicTextTokens
  return (text) => {
    const count: unknown = tokenizer(text)
    if (typeof count !== 'number' || !Number.isFinite(count) || count < 0) {
      throw new RangeError(
        `TokenMeter: the tokenizer returned ${describeValue(count)} for a text of ${text.length} code units; it ` +
          `must return a finite number >= 0`,
      )
    }
    return Math.ceil(count)
  }
}

/**
 * Estimated prompt tokens of one message:
 * `ROLE_OVERHEAD + sum of its blocks`, each block priced by {@link estimateBlockTokens}.
 */
export function estimateMessageTokens(message: Message, countText: TextTokenCounter = heuristicTextTokens): number {
  let tokens = ROLE_OVERHEAD
  for (const block of message.content) tokens += estimateBlockTokens(block, countText)
  return tokens
}

/**
 * Estimated prompt tokens of one content block:
 * - `text`, `reasoning`: `text(block.text) + BLOCK_OVERHEAD` (a reasoning signature is opaque
 *   provider data and is not counted);
 * - `tool-call`: `text(name) + text(arguments) + BLOCK_OVERHEAD` (the call id is not counted);
 * - `tool-result`: `BLOCK_OVERHEAD + sum of its inner blocks`;
 * - `image`: `IMAGE_TOKENS`.
 *
 * A block type this version does not know (a newer writer's log) is priced as
 * `text(canonicalJson(block)) + BLOCK_OVERHEAD`, so it is never free.
 */
export function estimateBlockTokens(block: ContentBlock, countText: TextTokenCounter = heuristicTextTokens): number {
  switch (block.type) {
    case 'text':
    case 'reasoning':
      return countText(block.text) + BLOCK_OVERHEAD
    case 'tool-call':
      return countText(block.name) + countText(block.arguments) + BLOCK_OVERHEAD
    case 'tool-result': {
      let tokens = BLOCK_OVERHEAD
      for (const inner of block.content) tokens += estimateBlockTokens(inner, countText)
      return tokens
    }
    case 'image':
      return IMAGE_TOKENS
    default:
      return countText(canonicalJson(block)) + BLOCK_OVERHEAD
  }
}

/** Estimated tokens of a system prompt: `text(system) + BLOCK_OVERHEAD`, or `0` when absent or empty. */
export function estimateSystemTokens(
  system: string | undefined,
  countText: TextTokenCounter = heuristicTextTokens,
): number {
  return system ? countText(system) + BLOCK_OVERHEAD : 0
}

/**
 * Estimated tokens of a tool list: `text(canonicalJson(tools)) + BLOCK_OVERHEAD`, or `0` when
 * absent or empty. The canonical JSON is what the envelope comparison uses too, so key order
 * never changes the price.
 */
export function estimateToolsTokens(
  tools: readonly ToolDefinition[] | undefined,
  countText: TextTokenCounter = heuristicTextTokens,
): number {
  return tools && tools.length > 0 ? countText(canonicalJson(tools)) + BLOCK_OVERHEAD : 0
}

/** A primitive as written (a string quoted), anything else by its type. */
function describeValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value)
  const kind = typeof value
  return value !== null && (kind === 'object' || kind === 'function' || kind === 'symbol') ? kind : String(value)
}
