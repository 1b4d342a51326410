import { PRUNE_MARKER, pruneContent } from '@warmfold/compaction-tool-result-pruner'
import { imageBlock, textBlock } from '@warmfold/llm'

export function main() {
  const log = textBlock(Array.from({ length: 200 }, (_, line) => `line ${line}`).join('\n'))
  const screenshot = imageBlock('image/png', 'iVBORw0KGgo=')
  // Keep the first 40 and the last 20 code points of the text; images stay, in order.
  const pruned = pruneContent([log, screenshot], { thresholdChars: 200, headChars: 40, tailChars: 20 })
  // [{ type: 'text', text: 'line 0\nline 1\n…' + PRUNE_MARKER + '…line 198\nline 199' }, screenshot]
  const again = pruned && pruneContent(pruned, { thresholdChars: 200, headChars: 40, tailChars: 20 }) // null: idempotent
  const small = pruneContent([textBlock('ok')]) // null: at most thresholdChars (default 8192), left alone
  return { pruned, again, small, marker: PRUNE_MARKER }
}
