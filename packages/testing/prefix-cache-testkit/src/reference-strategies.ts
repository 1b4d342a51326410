import type { PlannedPrune, PrunerSeam, SummaryRequestInput, SurfaceRegion } from '@warmfold/compaction-basic'
import { BasicCompactionEngine, COMPACTION_INSTRUCTION } from '@warmfold/compaction-basic'
import type { GenerateOptions, Message } from '@warmfold/llm'
import { createMessage, createUserMessage, textBlock } from '@warmfold/llm'
import type { Session } from '@warmfold/session'
import { LONG_COMPACTION_INSTRUCTION } from './long-compaction-instruction.ts'

/**
 * Reference strategy `legacy`, for side-by-side numbers only: the design warmfold replaces.
 * It prunes the whole surface before summarizing (so the summary replays rewritten history) and
 * sends the summary call without the conversation's effort, temperature and stop (so the
 * runtime fills in defaults and the call lands in another cache family).
 */
export class LegacyCompactionEngine extends BasicCompactionEngine {
  protected override buildSummaryRequest(input: SummaryRequestInput): GenerateOptions {
    const {
      reasoningEffort: _effort,
      temperature: _temperature,
      stop: _stop,
      ...rest
    } = super.buildSummaryRequest(input)
    return rest
  }

  protected override landPrunePlan(
    session: Session,
    pruner: PrunerSeam,
    plan: readonly PlannedPrune[],
    _region: SurfaceRegion,
  ): void {
    if (plan.length) pruner.pruneSession(session)
  }
}

/** The summarizer system prompt of the `cold` reference strategy. */
export const COLD_SUMMARIZER_SYSTEM =
  'You are a summarization assistant. Summarize the conversation transcript you are given for a coding agent.'

/**
 * Reference strategy `cold`, for side-by-side numbers only: the common peer design. The
 * summary call has its own system prompt, no tools, and the history flattened into one user
 * message, so none of the conversation's cached prefix can be reused.
 */
export class ColdCompactionEngine extends BasicCompactionEngine {
  /** The summarizer's system prompt, the tag around the transcript, and the characters kept of each tool result. */
  protected readonly transcript = { system: COLD_SUMMARIZER_SYSTEM, tag: 'transcript', resultChars: Infinity }

  protected override buildSummaryRequest(input: SummaryRequestInput): GenerateOptions {
    const warm = super.buildSummaryRequest(input)
    const { system, tag, resultChars } = this.transcript
    const transcript = input.regionMessages.map((message) => flatten(message, resultChars)).join('\n\n')
    return {
      provider: warm.provider,
      model: warm.model,
      maxTokens: warm.maxTokens,
      system,
      messages: [createUserMessage(`<${tag}>\n${transcript}\n</${tag}>\n\n${COMPACTION_INSTRUCTION}`)],
      purpose: 'compaction',
      sessionId: warm.sessionId,
      signal: warm.signal,
    }
  }
}

/** The summarizer system prompt of the `transcript` reference strategy. */
export const TRANSCRIPT_SUMMARIZER_SYSTEM =
  'You are a context summarization assistant. Read the conversation transcript between a user and a coding ' +
  ('assistant and write a structured summary that another model can continue the work from. Do not continue the ' +
    'conversation and do not answer questions in it.')

/**
 * Characters of each tool result the `transcript` strategy keeps (pi 0.73.1
 * and opencode 1.18.33 cut at about 2,000).
 */
export const TRANSCRIPT_TOOL_RESULT_CHARS = 2000

/**
 * Reference strategy `transcript`, for side-by-side numbers only: the shape of pi 0.73.1 and
 * opencode 1.18.33. As `cold`: own summarizer system prompt, no tools, the region as one text
 * transcript in one user message, but with every tool result cut to its first
 * {@link TRANSCRIPT_TOOL_RESULT_CHARS} characters, and the instruction at the end of that
 * message. The request is small and cold; its summarizer never sees a full tool output.
 */
export class TranscriptCompactionEngine extends ColdCompactionEngine {
  protected override readonly transcript = {
    system: TRANSCRIPT_SUMMARIZER_SYSTEM,
    tag: 'conversation',
    resultChars: TRANSCRIPT_TOOL_RESULT_CHARS,
  }
}

/**
 * Reference strategy `toolless`, for side-by-side numbers only: the shape of Codex CLI 0.171.0
 * and Qwen Code 0.24.4. The region is replayed exactly, with the conversation's system prompt
 * and settings, but without any tool definition, then the instruction as the last message.
 * Tool definitions come first in the prompt, so dropping them breaks the cached prefix at its
 * start.
 */
export class ToollessCompactionEngine extends BasicCompactionEngine {
  protected override buildSummaryRequest(input: SummaryRequestInput): GenerateOptions {
    const { tools: _tools, ...rest } = super.buildSummaryRequest(input)
    return rest
  }
}

/**
 * Reference strategy `long-instruction`, for side-by-side numbers only: the shape of Claude Code
 * 2.1.332. warmfold's warm replay, with the {@link LONG_COMPACTION_INSTRUCTION} (6,400
 * characters) appended as a text block to the last message of the region when that is a plain
 * user message, instead of a separate trailing message. When the region ends with an assistant
 * message or a tool result (whose message carries only that result in warmfold's message model),
 * the instruction follows as its own user message; either way the prompt up to the instruction
 * is the conversation's.
 */
export class LongInstructionCompactionEngine extends BasicCompactionEngine {
  protected override buildSummaryRequest(input: SummaryRequestInput): GenerateOptions {
    const warm = super.buildSummaryRequest(input)
    const instruction = warm.messages.at(-1) as Message
    const region = warm.messages.slice(0, -1)
    const last = region.at(-1)
    const plainUser = last?.role === 'user' && last.content.every((block) => block.type !== 'tool-result')
    const messages = plainUser
      ? [
          ...region.slice(0, -1),
          createMessage({
            id: last.id,
            role: 'user',
            content: [...last.content, textBlock(LONG_COMPACTION_INSTRUCTION)],
            source: last.source,
          }),
        ]
      : [...region, createMessage({ role: 'user', content: LONG_COMPACTION_INSTRUCTION, source: instruction.source })]
    return { ...warm, messages }
  }
}

/** A message as transcript text; tool results longer than `resultChars` keep their first `resultChars` characters. */
function flatten(message: Message, resultChars: number): string {
  const parts = message.content.map((block) => {
    switch (block.type) {
      case 'text':
        return block.text
      case 'reasoning':
        return `(thinking) ${block.text}`
      case 'tool-call':
        return `(tool call ${block.name}) ${block.arguments}`
      case 'tool-result':
        return (
          `(tool result) ` +
          `${cut(block.content.map((part) => (part.type === 'text' ? part.text : '[image]')).join(''), resultChars)}`
        )
      case 'image':
        return '[image]'
    }
  })
  return `${message.role}: ${parts.join('\n')}`
}

function cut(text: string, chars: number): string {
  return text.length > chars ? `${text.slice(0, chars)}\n[… ${text.length - chars} more characters truncated]` : text
}
