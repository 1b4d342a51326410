import type { ContentBlock, GenerateOptions, Message, ToolDefinition } from '@warmfold/llm'
import { createMessage } from '@warmfold/llm'
import { COMPACTION_INSTRUCTION } from '@warmfold/compaction-basic'
import type { CacheObservation } from '@warmfold/prefix-cache-testkit'
import { fillerText, PrefixCache } from '@warmfold/prefix-cache-testkit'
import type { RecordedRequest, Reply } from '@warmfold/test-utils'
import { RecordingServer } from '@warmfold/test-utils'

/** The system prompt of the LangChain-style cold summary (how the server tells its calls apart). */
export const COLD_SUMMARY_SYSTEM =
  'You are a summarization assistant. Summarize the conversation you are given so that an agent can continue the work. Keep file paths, commands, errors and decisions.'

/** One request the simulated provider billed. */
export interface SimulatedRequest {
  readonly observation: CacheObservation
  /** Output tokens of the scripted answer (4 characters each). */
  readonly outputTokens: number
  /** Tool results in the prompt (the history the model still sees verbatim). */
  readonly toolResults: number
  /** Whether the prompt carries a summary (a warmfold checkpoint or a cold summary). */
  readonly summarized: boolean
}

interface ChatBody {
  model: string
  temperature?: number
  messages: Array<{
    role: string
    content: string | null | Array<{ type: string; text?: string }>
    tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>
    tool_call_id?: string
  }>
  tools?: Array<{ function: { name: string; description?: string; parameters: object } }>
}

/**
 * An OpenAI-compatible chat-completions server on 127.0.0.1 whose billing is the test kit's
 * prefix-cache simulator: each request body is read back into warmfold's request model and
 * charged by `PrefixCache` (the `bytes` profile), and the usage it answers with is the
 * simulator's (`prompt_tokens`, `cached_tokens`). The model is scripted: conversation request `n`
 * calls `read_file` for `src/module-n.ts` until `steps` calls were made, then answers `done`; a
 * summary call (warmfold's instruction last, or the cold summary's system prompt) gets a
 * 1,600-character summary.
 */
export class SimulatorServer {
  readonly cache = new PrefixCache('bytes')
  readonly billed: SimulatedRequest[] = []
  private conversationRequests = 0

  private constructor(
    readonly server: RecordingServer,
    private readonly steps: number,
  ) {}

  static async start(steps: number): Promise<SimulatorServer> {
    let simulator: SimulatorServer | undefined
    const server = await RecordingServer.start((request) => simulator!.answer(request))
    simulator = new SimulatorServer(server, steps)
    return simulator
  }

  close(): Promise<void> {
    return this.server.close()
  }

  private answer(recorded: RecordedRequest): Reply {
    const body = recorded.json as ChatBody
    const request = toWarmfold(body)
    const last = request.messages.at(-1)
    const lastText = last?.content.length === 1 && last.content[0]!.type === 'text' ? last.content[0]!.text : undefined
    const summary = lastText === COMPACTION_INSTRUCTION || request.system === COLD_SUMMARY_SYSTEM
    const observation = this.cache.observe({ ...request, purpose: summary ? 'compaction' : 'conversation' })
    let text: string | null = null
    let call: { id: string; name: string; arguments: string } | undefined
    if (summary)
      text = `## Goal and Intent\n- read every module\n## Files and Code\n${fillerText(this.billed.length + 7, 1_500)}`
    else {
      const step = this.conversationRequests++
      if (step < this.steps)
        call = { id: `call_${step}`, name: 'read_file', arguments: JSON.stringify({ path: `src/module-${step}.ts` }) }
      else text = 'done'
    }
    const outputTokens = Math.ceil(((text ?? '').length + (call ? call.arguments.length + call.name.length : 0)) / 4)
    const toolResults = request.messages.reduce(
      (count, message) => count + message.content.filter((block) => block.type === 'tool-result').length,
      0,
    )
    const summarized =
      request.messages.some((message) =>
        message.content.some((block) => block.type === 'text' && block.text.includes('<compacted-summary>')),
      ) ||
      body.messages.some((message) => typeof message.content === 'string' && message.content.startsWith(SUMMARY_PREFIX))
    this.billed.push({ observation, outputTokens, toolResults, summarized })
    const usage = {
      prompt_tokens: observation.promptTokens,
      completion_tokens: outputTokens,
      total_tokens: observation.promptTokens + outputTokens,
      prompt_tokens_details: { cached_tokens: observation.cachedTokens },
    }
    const message = {
      role: 'assistant',
      content: text,
      ...(call
        ? { tool_calls: [{ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } }] }
        : {}),
    }
    return {
      status: 200,
      body: {
        id: 'chatcmpl-sim',
        object: 'chat.completion',
        created: 1767225600,
        model: body.model,
        choices: [{ index: 0, message, finish_reason: call ? 'tool_calls' : 'stop' }],
        usage,
      },
    }
  }
}

/** How the cold-summary host marks its summary message (so the server can tell it carries one). */
export const SUMMARY_PREFIX = 'Summary of the conversation so far:'

/** A chat-completions body in warmfold's request model, so the simulator renders it as it renders warmfold's own requests. */
function toWarmfold(body: ChatBody): GenerateOptions {
  let system: string | undefined
  const messages: Message[] = []
  for (const [index, message] of body.messages.entries()) {
    const id = `m${index}`
    const text =
      typeof message.content === 'string'
        ? message.content
        : (message.content ?? []).map((part) => part.text ?? '').join('')
    if (message.role === 'system') system = system === undefined ? text : `${system}\n${text}`
    else if (message.role === 'tool')
      messages.push(
        createMessage({
          id,
          role: 'user',
          content: [{ type: 'tool-result', toolCallId: message.tool_call_id ?? '', content: [{ type: 'text', text }] }],
        }),
      )
    else if (message.role === 'assistant') {
      const content: ContentBlock[] = text ? [{ type: 'text', text }] : []
      for (const call of message.tool_calls ?? [])
        content.push({ type: 'tool-call', id: call.id, name: call.function.name, arguments: call.function.arguments })
      messages.push(
        createMessage({
          id,
          role: 'assistant',
          content: content.length > 0 ? content : '',
          source: { kind: 'model', provider: 'sim', model: body.model },
        }),
      )
    } else messages.push(createMessage({ id, role: 'user', content: text }))
  }
  const tools: ToolDefinition[] = (body.tools ?? []).map((tool) => ({
    name: tool.function.name,
    description: tool.function.description ?? '',
    parameters: tool.function.parameters as ToolDefinition['parameters'],
  }))
  return {
    provider: 'sim',
    model: body.model,
    ...(body.temperature === undefined ? {} : { temperature: body.temperature }),
    ...(system === undefined ? {} : { system }),
    ...(tools.length > 0 ? { tools } : {}),
    messages,
  }
}
