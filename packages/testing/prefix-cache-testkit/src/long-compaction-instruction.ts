import { COMPACTION_INSTRUCTION } from '@warmfold/compaction-basic'
import { fillerText } from './workload-text.ts'

/** Characters of the `long-instruction` strategy's instruction (Claude Code 2.1.332 sends about 6,400). */
export const LONG_INSTRUCTION_CHARS = 6400

const GUIDANCE =
  `\n\nBefore you write the checkpoint, review the conversation chronologically. For each part, identify the ` +
  `user's explicit requests and intents, your approach to them, the key decisions, technical concepts and code ` +
  `patterns, and the specific details: file names, full code snippets, function signatures and file edits. Note ` +
  `every error you ran into and how you fixed it, and pay special attention to user feedback, especially where ` +
  `the user told you to do something differently. Double-check the technical accuracy and completeness of every ` +
  `section.\n\nReference notes (carried verbatim so the instruction has the length of the design it models): `

const FILLER_CHARS = LONG_INSTRUCTION_CHARS - COMPACTION_INSTRUCTION.length - GUIDANCE.length

/**
 * The `long-instruction` strategy's instruction: warmfold's {@link COMPACTION_INSTRUCTION}, the
 * review guidance of a longer design, then deterministic filler up to exactly
 * {@link LONG_INSTRUCTION_CHARS} characters. Only its length matters to the cache: a constant
 * of that size costs the same uncached tokens whatever it says.
 */
export const LONG_COMPACTION_INSTRUCTION = `${COMPACTION_INSTRUCTION}${GUIDANCE}${fillerText(6400, FILLER_CHARS)}`
