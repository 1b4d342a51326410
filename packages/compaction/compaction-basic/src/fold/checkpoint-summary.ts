import type { Message } from '@warmfold/llm'

/** The summary a checkpoint message holds: its text without the preamble and the `<compacted-summary>` frame. */
export function checkpointSummaryOf(message: Message): string {
  const text = message.content.map((block) => (block.type === 'text' ? block.text : '')).join('\n')
  const framed = /<compacted-summary>\n?([\s\S]*?)\n?<\/compacted-summary>\s*$/.exec(text)
  return framed ? framed[1]! : text
}
