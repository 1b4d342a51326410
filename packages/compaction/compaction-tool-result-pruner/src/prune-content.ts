import type { ToolResultContent } from '@warmfold/llm'
import { textBlock } from '@warmfold/llm'
import { codePointLength, codePointOffset } from './code-point-length.ts'
import type { PruneBudget } from './prune-budget.ts'
import { checkPruneBudget, DEFAULT_PRUNE_BUDGET } from './prune-budget.ts'
import { PRUNE_MARKER } from './prune-marker.ts'

/**
 * Prunes the content of one tool result to head + {@link PRUNE_MARKER} + tail.
 *
 * The text blocks are read as one text (their concatenation, counted in code points). When it
 * holds at most `thresholdChars` code points the result is left alone and `null` is returned.
 * Otherwise the first `headChars` and the last `tailChars` code points are kept and the middle
 * is omitted:
 * - every text block keeps its own share of the head and of the tail, in place; a text block
 *   that lies entirely in the omitted middle disappears (so does one that was empty);
 * - the marker is written into the text block in which the omitted middle begins, right after
 *   that block's share of the head (and before its share of the tail, when the whole cut is
 *   inside one block); a block left holding only the marker stays as a marker-only block;
 * - images and other non-text blocks are kept unchanged, in their original order relative to
 *   the text (an image from the middle stays; only text is pruned).
 *
 * Cuts fall on code point boundaries only, so a surrogate pair is never split. The output
 * holds exactly `headChars + PRUNE_MARKER_LENGTH + tailChars` text code points, which a valid
 * budget keeps at or below the threshold: a second pass returns `null` (idempotent), and the
 * result is always strictly shorter than its input.
 *
 * @param budget defaults to {@link DEFAULT_PRUNE_BUDGET}.
 * @throws RangeError when `budget` is invalid (see {@link checkPruneBudget}).
 */
export function pruneContent(
  blocks: readonly ToolResultContent[],
  budget: PruneBudget = DEFAULT_PRUNE_BUDGET,
): ToolResultContent[] | null {
  checkPruneBudget(budget)
  const lengths = blocks.map((block) => (block.type === 'text' ? codePointLength(block.text) : 0))
  const total = lengths.reduce((sum, length) => sum + length, 0)
  if (total <= budget.thresholdChars) return null
  // The omitted middle is the code-point interval [omitStart, omitEnd) of the concatenated
  // text; a valid budget makes it at least PRUNE_MARKER_LENGTH + 1 long, never empty.
  const omitStart = budget.headChars
  const omitEnd = total - budget.tailChars
  const pruned: ToolResultContent[] = []
  let markerPlaced = false
  let start = 0
  for (const [index, block] of blocks.entries()) {
    if (block.type !== 'text') {
      pruned.push(block)
      continue
    }
    const end = start + (lengths[index] as number)
    let text = ''
    if (start < omitStart)
      text += end <= omitStart ? block.text : block.text.slice(0, codePointOffset(block.text, omitStart - start))
    if (!markerPlaced && start <= omitStart && omitStart < end) {
      text += PRUNE_MARKER
      markerPlaced = true
    }
    if (end > omitEnd)
      text += start >= omitEnd ? block.text : block.text.slice(codePointOffset(block.text, omitEnd - start))
    if (text !== '') pruned.push(textBlock(text))
    start = end
  }
  // Unreachable with a non-empty middle; guards the idempotence claim against a future edit.
  if (!markerPlaced) throw new Error('pruneContent: internal error, the prune marker was not placed')
  return pruned
}
