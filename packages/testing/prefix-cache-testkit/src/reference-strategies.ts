import type { PlannedPrune, PrunerSeam, SummaryRequestInput, SurfaceRegion } from '@warmfold/compaction-basic'
import { BasicCompactionEngine, COMPACTION_INSTRUCTION } from '@warmfold/compaction-basic'
import type { GenerateOptions, Message } from '@warmfold/llm'
import { createUserMessage } from '@warmfold/llm'
import type { Session } from '@warmfold/session'

/**
 * Reference strategy `legacy`, for side-by-side numbers only: the design warmfold replaces.
 * It prunes the whole surface before summarizing (so the summary replays rewritten history) and
 * sends the summary call without the conversation's effort, temperature and stop (so the
 * runtime fills in defaults and the call lands in another cache family).
 */
export class LegacyCompactionEngine extends BasicCompactionEngine {
  protected override buildSummaryRequest(input: SummaryRequestInput): GenerateOptions {
    const { reasoningEffort: _effort, temperature: _temperature, stop: _stop, ...rest } = super.buildSummaryRequest(input)
    return rest
  }

  protected override landPrunePlan(session: Session, pruner: PrunerSeam, plan: readonly PlannedPrune[], _region: SurfaceRegion): void {
    if (plan.length) pruner.pruneSession(session)
  }
}

/** The summarizer system prompt of the `cold` reference strategy. */
export const COLD_SUMMARIZER_SYSTEM = 'You are a summarization assistant. Summarize the conversation transcript you are given for a coding agent.'

/**
 * Reference strategy `cold`, for side-by-side numbers only: the common peer design. The
 * summary call has its own system prompt, no tools, and the history flattened into one user
 * message, so none of the conversation's cached prefix can be reused.
 */
export class ColdCompactionEngine extends BasicCompactionEngine {
  protected override buildSummaryRequest(input: SummaryRequestInput): GenerateOptions {
    const warm = super.buildSummaryRequest(input)
    const transcript = input.regionMessages.map(flatten).join('\n\n')
    return {
      provider: warm.provider,
      model: warm.model,
      maxTokens: warm.maxTokens,
      system: COLD_SUMMARIZER_SYSTEM,
      messages: [createUserMessage(`<transcript>\n${transcript}\n</transcript>\n\n${COMPACTION_INSTRUCTION}`)],
      purpose: 'compaction',
      sessionId: warm.sessionId,
      signal: warm.signal,
    }
  }
}

function flatten(message: Message): string {
  const parts = message.content.map((block) => {
    switch (block.type) {
      case 'text':
        return block.text
      case 'reasoning':
        return `(thinking) ${block.text}`
      case 'tool-call':
        return `(tool call ${block.name}) ${block.arguments}`
      case 'tool-result':
        return `(tool result) ${block.content.map((part) => (part.type === 'text' ? part.text : '[image]')).join('')}`
      case 'image':
        return '[image]'
    }
  })
  return `${message.role}: ${parts.join('\n')}`
}
