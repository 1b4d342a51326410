import type { Message } from '@warmfold/llm'

/**
 * The trailing instruction of every summary call. It is a constant, so it renders the same
 * bytes in every compaction and is itself cache-stable; it is a user message after the replayed
 * conversation, never a separate system prompt (rule C3).
 */
export const COMPACTION_INSTRUCTION = [
  'You are now acting as the context compaction step of this coding session. Condense the entire conversation ' +
    'above into an engineering checkpoint that another model can resume from without seeing the original ' +
    'messages.',
  '',
  'Write exactly these Markdown sections, in this order, every one of them, with terse bullet points; write (none) ' +
    'under a section that has nothing:',
  '',
  '## Goal and Intent',
  '[what the user asked for, in their terms, including constraints and preferences they stated]',
  '## Key Decisions',
  '[technical choices made and why; approaches rejected]',
  '## Files and Code',
  '[every file read or changed, with the exact paths, identifiers, signatures and snippets that matter]',
  '## Errors and Fixes',
  '[errors met, with exact messages, and how each was fixed or why it is still open]',
  '## Pending Work',
  '[tasks asked for and not yet done]',
  '## Current Work',
  '[what was being done right before this checkpoint, precisely]',
  '## Next Step',
  "[the single next action, consistent with the user's latest request]",
  '## Critical Context',
  '[facts, numbers, commands, user feedback and corrections that must not be lost]',
  '',
  'Rules: keep literal paths, commands, error messages, identifiers and numbers exactly. If the conversation ' +
    'starts with an earlier checkpoint (inside <compacted-summary>), merge it: keep what is still true, drop ' +
    'what is stale, do not copy it wholesale. Do not call any tool and take no other action. Do not mention this ' +
    'request or that the conversation was compacted. Output only the checkpoint.',
].join('\n')

/** Tells the conversation model how to read a checkpoint. */
export const CHECKPOINT_PREAMBLE =
  'This is an automatically generated checkpoint that condenses an earlier part of this conversation. Treat it as ' +
  'established background: do not restate or acknowledge it, and continue the work from the messages that follow.'

/** The text of a checkpoint message: the preamble, then the summary inside `<compacted-summary>`. */
export function frameCheckpoint(summary: string): string {
  return `${CHECKPOINT_PREAMBLE}\n\n<compacted-summary>\n${summary.trim()}\n</compacted-summary>`
}

/** The summary a checkpoint message holds: its text without the preamble and the `<compacted-summary>` frame. */
export function checkpointSummaryOf(message: Message): string {
  const text = message.content.map((block) => (block.type === 'text' ? block.text : '')).join('\n')
  const framed = /<compacted-summary>\n?([\s\S]*?)\n?<\/compacted-summary>\s*$/.exec(text)
  return framed ? framed[1]! : text
}
