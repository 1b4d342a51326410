import type { CompactionAuditData } from '@warmfold/compaction'
import { checkpointSource } from '@warmfold/compaction'
import type { ResolvedFoldAudit } from '@warmfold/compaction-basic/engine-parts'
import { FoldAuditor } from '@warmfold/compaction-basic/engine-parts'
import type { GenerateOptions, GenerateResult, Message, ToolResultMessage } from '@warmfold/llm'
import { Session } from '@warmfold/session'
import { estimateSystemTokens } from '@warmfold/token-meter'

/** The engine's fold audit and artifact trail for one fold of an AI SDK prompt. */
export interface PromptFoldAuditor {
  /** The summary as the checkpoint holds it: the model's text, then the artifact trail (when enabled and not empty). */
  checkpointSummary(summary: string): string
  /**
   * The audit (`compaction/audit` of a warmfold host), or `undefined` when `audit.enabled` is false.
   * @param projected the prompt after the fold, in warmfold's view, the checkpoint at `checkpointAt`.
   */
  audit(
    summary: { readonly text: string; readonly sent: GenerateOptions; readonly result: GenerateResult },
    projected: readonly Message[],
    checkpointAt: number,
  ): CompactionAuditData | undefined
}

/**
 * The engine's `FoldAuditor` over the folded messages (warmfold's view of them): they are the
 * region of a log of their own, so the audit reads the same artifacts, writes the same trail and
 * checks the same summary health as it does for a warmfold host's fold. A leading checkpoint
 * (the previous fold's) is logged as one, so its trail is carried and its artifacts compared.
 * @param shadowedTokens the folded messages' tokens (the trail takes at most a quarter of them).
 */
export function foldAuditor(
  settings: ResolvedFoldAudit,
  folded: readonly Message[],
  shadowedTokens: number,
  leadingCheckpoint: boolean,
): PromptFoldAuditor {
  const log = new Session('ai-sdk-fold')
  const seqs = folded.flatMap((message, index) =>
    logMessage(log, index === 0 && leadingCheckpoint ? { ...message, source: checkpointSource('ai-sdk') } : message),
  )
  const meter = { estimateSystem: (text?: string) => estimateSystemTokens(text) }
  const auditor = new FoldAuditor(meter, log, seqs, settings, () => shadowedTokens)
  return {
    checkpointSummary: (summary) => auditor.checkpointSummary(summary),
    audit: (summary, projected, checkpointAt) =>
      auditor.audit(crypto.randomUUID(), { ...summary, attempts: [] }, projected, checkpointAt, []),
  }
}

/**
 * Appends `message` to `log` as a warmfold host logs it, returning the seqs: an assistant reply,
 * one `tool/result` per tool result (an AI SDK tool message may hold several), the rest a user
 * message (a system message mid-prompt included: the audit reads its text the same way).
 */
function logMessage(log: Session, message: Message): number[] {
  if (message.role === 'assistant') return [log.append('assistant/message', { message }, 'append').seq]
  const seqs: number[] = []
  const others = message.content.filter((block) => block.type !== 'tool-result')
  if (others.length > 0)
    seqs.push(log.append('user/message', { message: { ...message, role: 'user', content: others } }, 'append').seq)
  for (const block of message.content) {
    if (block.type !== 'tool-result') continue
    const result: ToolResultMessage = {
      ...message,
      role: 'user',
      content: [block],
      source: { kind: 'tool', toolCallId: block.toolCallId },
    }
    seqs.push(log.append('tool/result', { message: result }, 'append').seq)
  }
  return seqs
}
