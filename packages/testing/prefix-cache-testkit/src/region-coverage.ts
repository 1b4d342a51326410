import type { ContentBlock, GenerateOptions, Message } from '@warmfold/llm'

/**
 * The share of a summarized region's characters that the summary request carries verbatim:
 * 1.0 for a full replay, less when the request truncates or rewrites what the summarizer sees.
 *
 * The region's characters are the texts of its blocks (text, reasoning, a tool call's name and
 * arguments, a tool result's text parts; images count 0). Each text counts in full when it
 * occurs verbatim anywhere in the request's system prompt or message blocks (a replayed block, a
 * transcript line, a block with text appended all qualify), else for its longest leading part
 * that occurs there (a tool result cut to its first 2,000 characters counts 2,000; a block whose
 * middle was rewritten counts up to the rewrite). A chance match of a few leading characters
 * counts too, which is negligible for blocks of real length. A region without characters has
 * coverage 1.
 */
export function regionCoverage(
  region: readonly Message[],
  request: Pick<GenerateOptions, 'system' | 'messages'>,
): number {
  // NUL never occurs in the workload's texts, so no match can span two pieces of the request.
  const haystack = [
    request.system ?? '',
    ...request.messages.flatMap((message) => message.content.flatMap(blockTexts)),
  ].join('\u0000')
  let total = 0
  let carried = 0
  for (const text of region.flatMap((message) => message.content.flatMap(blockTexts))) {
    total += text.length
    carried += carriedPrefix(text, haystack)
  }
  return total === 0 ? 1 : carried / total
}

/** The texts of one content block, in the order a transcript would show them. */
function blockTexts(block: ContentBlock): string[] {
  switch (block.type) {
    case 'text':
    case 'reasoning':
      return [block.text]
    case 'tool-call':
      return [block.name, block.arguments]
    case 'tool-result':
      return block.content.flatMap((part) => (part.type === 'text' ? [part.text] : []))
    case 'image':
      return []
  }
}

/**
 * Length of the longest prefix of `text` found in `haystack` (prefixes of a found prefix
 * are found, so a binary search suffices).
 */
function carriedPrefix(text: string, haystack: string): number {
  if (haystack.includes(text)) return text.length
  let low = 0
  let high = text.length - 1
  while (low < high) {
    const middle = Math.ceil((low + high) / 2)
    if (haystack.includes(text.slice(0, middle))) low = middle
    else high = middle - 1
  }
  return low
}
