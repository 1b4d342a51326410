import { replayWithMessage } from '@warmfold/agent-loop'
import type { GenerateOptions, Message } from '@warmfold/llm'
import { createMessage } from '@warmfold/llm'
import type { RequestHeader } from '@warmfold/session'
import { COMPACTION_INSTRUCTION } from './compaction-instruction.ts'
import type { ResolvedPolicy } from '../config/compaction-policy.ts'

/** Everything the summary request is built from. */
export interface SummaryRequestInput {
  /** The routed header: the latest logged `request/header`. */
  readonly header: RequestHeader
  /** The policy of the summary target. */
  readonly policy: ResolvedPolicy
  /** The region's messages exactly as the conversation's projection gives them. */
  readonly regionMessages: readonly Message[]
  /**
   * The messages the call replays (rule C3): the session's last answered conversation request
   * whole, when the region is a prefix of it, the summary goes to the conversation's own route
   * and the whole request fits the summary budget with the full output cap (its cache entry ends
   * where it ends, so a breakpoint cache finds it however far the region ends before); else the
   * region's messages. The region is what the checkpoint replaces either way.
   */
  readonly replayMessages: readonly Message[]
  readonly sessionId: string
  readonly signal?: AbortSignal
}

export const INSTRUCTION_SOURCE_PLUGIN = 'warmfold/compaction-basic'

/** The summary call's target: the configured summarization route, else the routed header's. */
export function summaryTarget(header: RequestHeader, policy: ResolvedPolicy): { provider: string; model: string } {
  if (policy.summarizationProvider !== undefined && policy.summarizationModel !== undefined) {
    return { provider: policy.summarizationProvider, model: policy.summarizationModel }
  }
  return { provider: header.config.provider, model: header.config.model }
}

/**
 * The warm summary request (rules C2 and C3).
 *
 * - Same route as the header (provider **and** model): reasoning effort, temperature and stop
 *   are copied from the header, so the call lands in the conversation's cache family. Another
 *   route inherits none of them: a stale effort must never leak into a different model.
 * - System prompt and tools are the header's, unchanged and in order (providers need the tool
 *   definitions to read the replayed tool calls).
 * - `maxTokens` is the policy's summary cap, never the conversation's: it is an output budget,
 *   not prompt bytes, and inheriting a large routed cap can push prompt + output past the window.
 * - Messages are `replayMessages` (the last answered request, or the region), byte for byte,
 *   then exactly one trailing instruction message.
 */
export function buildSummaryRequest(input: SummaryRequestInput): GenerateOptions {
  const { header, policy } = input
  const target = summaryTarget(header, policy)
  const sameRoute = target.provider === header.config.provider && target.model === header.config.model
  const call = {
    maxTokens: policy.maxTokens,
    purpose: 'compaction',
    sessionId: input.sessionId,
    signal: input.signal,
  } as const
  // The conversation's own route: the replayed request plus one message, the same primitive a
  // fork's first request is (`replayWithMessage` of @warmfold/agent-loop); only the output cap differs.
  if (sameRoute)
    return { ...replayWithMessage({ header, messages: input.replayMessages }, instructionMessage()), ...call }
  return {
    provider: target.provider,
    model: target.model,
    system: header.system,
    tools: header.tools,
    messages: [...input.replayMessages, instructionMessage()],
    ...call,
  }
}

/** The trailing instruction as a user message. */
export function instructionMessage(): Message {
  return createMessage({
    role: 'user',
    content: COMPACTION_INSTRUCTION,
    source: { kind: 'plugin', plugin: INSTRUCTION_SOURCE_PLUGIN },
  })
}
