import type { Context } from '@cordisjs/core'
import type { ContentBlock, GenerateResult, ToolCallBlock } from '@warmfold/llm'
import { ContentAssembler, createAssistantMessage, createToolResultMessage, LlmError } from '@warmfold/llm'
import type { RequestHeader } from '@warmfold/session'
import { canonicalHeader, headerEquals } from '@warmfold/session'
import type { RequestHookContext } from './agent-events.ts'
import type { ForkLineage } from './fork-lineage.ts'
import type { AgentRequest } from './agent-request.ts'
import type { TurnEndReason, TurnResult } from './turn-result.ts'
import type { AgentHandle } from './agent-handle.ts'
import { describe } from './agent-error.ts'
import { DEFAULT_MAX_STEP_RETRIES, DEFAULT_MAX_STEPS, DEFAULT_TOOL_TIMEOUT_MS } from './agent-options.ts'
import { executeToolCall } from './execute-tool-call.ts'
import { requestFromHeader } from './replay-with-message.ts'
import {
  LLM_RUNTIME_SERVICE,
  requireServices,
  SESSION_STORE_SERVICE,
  TOOL_REGISTRY_SERVICE,
} from './missing-service-error.ts'

/** How a turn ended, as logged on `turn/end` (and the thrown value behind a failure, never logged). */
export type TurnOutcome = Omit<TurnResult, 'turn' | 'reason'> & { readonly reason: TurnEndReason }

/**
 * What a turn needs of its agent: the public agent plus the one piece of per-instance state the
 * header step reads. `Agent` implements it; keeping it here means this file never imports the
 * class that calls it.
 */
export interface TurnAgent extends AgentHandle {
  /** True on the first request this agent instance builds (a logged header then means a resume). */
  consumeFirstRequest(): boolean
  /** Set when the agent is a fork: every request sends this lineage's header unchanged. */
  readonly lineage?: ForkLineage
  /** Told as each conversation request is sent, begins to be answered, is answered or fails. */
  noteRequest?(request: AgentRequest): void
}

/** How far a running turn got; read when the turn throws instead of returning an outcome. */
export interface TurnProgress {
  /** Steps (requests) started so far. */
  step: number
}

/**
 * Runs one turn of `agent`: steps until the model stops calling tools, the turn is aborted,
 * `maxSteps` is reached or a request fails for good. Every surface change is an append, so
 * each request strictly extends the previous one (rule C1).
 */
export async function runTurn(
  ctx: Context,
  agent: TurnAgent,
  turn: number,
  signal: AbortSignal,
  progress: TurnProgress = { step: 0 },
): Promise<TurnOutcome> {
  const session = agent.session
  const maxSteps = agent.options.maxSteps ?? DEFAULT_MAX_STEPS
  const maxStepRetries = agent.options.maxStepRetries ?? DEFAULT_MAX_STEP_RETRIES
  let step = 0
  while (true) {
    if (signal.aborted) return { reason: 'aborted', steps: step }
    if (step >= maxSteps)
      return {
        reason: 'max-steps',
        steps: step,
        error: `the turn reached maxSteps (${maxSteps}) without a final answer`,
      }
    step += 1
    progress.step = step
    let retries = 0
    let result: GenerateResult
    while (true) {
      // A service unloaded since the agent was created ends the turn with a message naming it.
      requireServices(ctx, 'AgentLoop', [LLM_RUNTIME_SERVICE, SESSION_STORE_SERVICE, TOOL_REGISTRY_SERVICE])
      await ctx.serial('agent/pre-step', { agent, turn, step, signal })
      if (signal.aborted) return { reason: 'aborted', steps: step - 1 }
      const header = await buildHeader(ctx, agent, turn, step)
      const assembler = new ContentAssembler()
      const messages = session.deriveMessages()
      const sent: AgentRequest = {
        header,
        messages,
        nodes: [...session.surface.nodes],
        turn,
        step,
        stage: 'sent',
      }
      agent.noteRequest?.(sent)
      try {
        const stream = ctx.llm.stream({
          ...requestFromHeader(header, messages),
          purpose: 'conversation',
          sessionId: session.id,
          ...(agent.lineage ? { cacheSessionId: agent.lineage.cacheSessionId } : {}),
          ...(agent.lineage?.cacheTtl ? { cacheTtl: agent.lineage.cacheTtl } : {}),
          signal,
        })
        let began = false
        for await (const chunk of stream) {
          if (!began) {
            began = true
            agent.noteRequest?.({ ...sent, stage: 'began' })
          }
          assembler.push(chunk)
        }
        result = assembler.result()
        agent.noteRequest?.({ ...sent, stage: 'answered' })
        break
      } catch (error) {
        agent.noteRequest?.({ ...sent, stage: 'failed' })
        if (signal.aborted || (LlmError.isInstance(error) && error.code === 'ABORTED')) {
          logPartial(agent, turn, step, assembler)
          return { reason: 'aborted', steps: step }
        }
        const action = await ctx.serial('agent/request-error', { agent, turn, step, error, retries, signal })
        if (action?.retry && retries < maxStepRetries && !signal.aborted) {
          retries += 1
          continue
        }
        return {
          reason: 'error',
          steps: step,
          errorCode: LlmError.isInstance(error) ? error.code : 'UNEXPECTED',
          error: describe(error),
          cause: error,
        }
      }
    }
    const header = session.requestHeader() as RequestHeader
    if (result.content.length === 0) {
      return {
        reason: 'empty-reply',
        steps: step,
        error: `the model answered with no content (finish reason ${result.finishReason})`,
      }
    }
    const message = createAssistantMessage(result.content, header.config)
    session.append(
      'assistant/message',
      { message, usage: result.usage, finishReason: result.finishReason, turn, step },
      'append',
    )
    const calls = result.content.filter((block): block is ToolCallBlock => block.type === 'tool-call')
    if (calls.length === 0) {
      await ctx.sessions.flush(session)
      return { reason: result.finishReason === 'max-tokens' ? 'max-tokens' : 'stop', steps: step }
    }
    for (const call of calls) {
      const allowed = agent.lineage?.tools
      const outcome = signal.aborted
        ? { content: `Tool "${call.name}" was not run: the turn was aborted.`, error: 'aborted before it ran' }
        : allowed && !allowed.has(call.name)
          ? refusedTool(call.name, allowed)
          : await executeToolCall(ctx.tools, call, {
              session,
              signal,
              defaultTimeoutMs: agent.options.toolTimeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS,
            })
      const resultMessage = createToolResultMessage(call.id, outcome.content, { isError: outcome.error !== undefined })
      session.append(
        'tool/result',
        { message: resultMessage, toolName: call.name, error: outcome.error, turn, step },
        'append',
      )
    }
    await ctx.sessions.flush(session)
  }
}

/**
 * Builds the step's header from the agent options, lets `agent/request` listeners change it,
 * and logs it as `request/header` when it differs from the logged one. A fork's header is its
 * lineage's, unchanged (the parent's last request, so the fork reads the parent's cache):
 * listeners see it, and one that replaces it fails the step, since any other header would send
 * a different prefix.
 */
async function buildHeader(ctx: Context, agent: TurnAgent, turn: number, step: number): Promise<RequestHeader> {
  const lineage = agent.lineage
  const { provider, model, reasoningEffort, temperature, stop, maxTokens, system } = agent.options
  const hook: RequestHookContext = {
    agent,
    turn,
    step,
    header: lineage?.header ?? {
      config: { provider, model, reasoningEffort, temperature, stop, maxTokens },
      system,
      tools: ctx.tools.definitions(),
    },
  }
  await ctx.serial('agent/request', hook)
  let header: RequestHeader
  if (lineage) {
    if (!headerEquals(hook.header, lineage.header)) {
      throw new Error(
        `fork ${agent.session.id}: an agent/request listener changed the header; a fork sends the header of ` +
          `${lineage.parentSessionId}'s request unchanged, so it reads that request's cache`,
      )
    }
    header = lineage.header
  } else {
    // Materialize adapter defaults into the logged header, so the log records the effort and
    // output cap the provider really received (a summary call copies them from here).
    const prepared = await ctx.llm.prepare({ ...hook.header.config, messages: [] })
    header = canonicalHeader({ ...hook.header, config: prepared })
  }
  const logged = agent.session.requestHeader()
  const firstOfInstance = agent.consumeFirstRequest()
  if (!logged || !headerEquals(logged, header)) {
    // A fork never logs `resume`: its header is pinned, so a logged one that differs is a change.
    const reason = !logged ? 'initial' : firstOfInstance && !lineage ? 'resume' : 'change'
    agent.session.append('request/header', { header, reason })
  }
  return agent.session.requestHeader() as RequestHeader
}

/** The error outcome of a call to a tool the fork was not given. */
function refusedTool(name: string, allowed: ReadonlySet<string>): { content: string; error: string } {
  const text =
    `Tool "${name}" is not available to this fork: the agent that forked it allowed only ` +
    `${allowed.size ? [...allowed].join(', ') : '(no tools)'}.`
  return { content: text, error: text }
}

function logPartial(agent: AgentHandle, turn: number, step: number, assembler: ContentAssembler): void {
  let content: ContentBlock[]
  try {
    content = assembler.content()
  } catch {
    // A tool call cut off before its id or name arrived cannot be represented; keep the rest.
    content = []
  }
  if (content.length) agent.session.append('assistant/partial', { turn, step, content, reason: 'aborted' })
}
