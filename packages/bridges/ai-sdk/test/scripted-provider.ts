import { createAnthropic } from '@ai-sdk/anthropic'
import { createOpenAICompatible } from '@ai-sdk/openai-compatible'
import type { LanguageModelV3 } from '@ai-sdk/provider'
import { COMPACTION_INSTRUCTION } from '@warmfold/compaction-basic'
import type { RecordedRequest, Reply } from '@warmfold/test-utils'
import { NamedEvent, RecordingServer } from '@warmfold/test-utils'
import { OUTPUT_CAP_KEYS } from '../src/index.ts'

/** Which wire format the scripted server speaks. */
export type Wire = 'openai-compatible' | 'anthropic'

/** The summary text the scripted model writes. */
export const SUMMARY_TEXT = '## Goal and Intent\n- read every file\n## Current Work\n- reading files one by one'

/** How the scripted model answers summary calls, and whether it reports cache reads. */
export interface ScriptedOptions {
  /** Answers of the first summary calls in order (then summaries): a tool call, or text cut off at the output cap. */
  readonly summaryReplies?: ReadonlyArray<'tool-call' | 'truncated'>
  /** Report no cache reads at all (a provider whose cache missed). */
  readonly noCacheReads?: boolean
  /** Summary replies wait for this (a slow summary decode). */
  readonly holdSummaries?: Promise<void>
  /** The summary text in place of {@link SUMMARY_TEXT}. */
  readonly summaryText?: string
  /** Report at most this many cached tokens for summary calls (a provider whose cache was mostly evicted). */
  readonly summaryCachedTokens?: number
  /** Answer the summary calls whose numbers are listed (0-based, over every summary call) with an error. */
  readonly failingSummaries?: readonly number[]
  /** The HTTP status of those errors: 503 (overloaded, retryable) unless given. */
  readonly failingStatus?: number
  /** Answer a request of more tokens than this with HTTP 400 `context_length_exceeded`, as a provider does. */
  readonly window?: number
}

/** A request the server received, with what it made of it. */
export interface ScriptedRequest {
  readonly recorded: RecordedRequest
  readonly summary: boolean
  /** The server's token count of the prompt: its body's characters / 4. */
  readonly promptTokens: number
}

/**
 * A scripted model on a real 127.0.0.1 server: conversation request `n` (counted by the server)
 * asks for `read_file` with `file-n.ts` until `steps` calls were made, then answers `done`; a
 * request whose last text is warmfold's instruction gets a summary. Usage counts 4 characters
 * per token, cached tokens being the longest body prefix shared with an earlier request, the
 * output cap left out of both (a provider caches the prompt, not the call's settings for output).
 */
export class ScriptedProvider {
  readonly requests: ScriptedRequest[] = []
  private conversationRequests = 0
  private summaryCalls = 0

  private constructor(
    readonly wire: Wire,
    readonly server: RecordingServer,
    private readonly steps: number,
    private readonly options: ScriptedOptions,
  ) {}

  static async start(wire: Wire, steps: number, options: ScriptedOptions = {}): Promise<ScriptedProvider> {
    let provider: ScriptedProvider | undefined
    const server = await RecordingServer.start(async (request) => {
      const reply = provider!.answer(request)
      if (provider!.requests.at(-1)!.summary && options.holdSummaries) await options.holdSummaries
      return reply
    })
    provider = new ScriptedProvider(wire, server, steps, options)
    return provider
  }

  /** The AI SDK model talking to this server. */
  model(): LanguageModelV3 {
    if (this.wire === 'openai-compatible')
      return createOpenAICompatible({
        name: 'scripted',
        baseURL: this.server.baseURL,
        apiKey: 'test-key',
        includeUsage: true,
      }).chatModel('scripted-model')
    return createAnthropic({ baseURL: this.server.baseURL, apiKey: 'test-key' })('claude-scripted')
  }

  /** Conversation requests only, in order. */
  conversation(): ScriptedRequest[] {
    return this.requests.filter((request) => !request.summary)
  }

  close(): Promise<void> {
    return this.server.close()
  }

  private answer(recorded: RecordedRequest): Reply {
    const body = recorded.json as { messages: Array<{ role: string; content: unknown }>; stream?: boolean }
    const summary = lastText(body.messages) === COMPACTION_INSTRUCTION
    let cached = 0
    const prompt = promptText(recorded)
    for (const earlier of this.requests) cached = Math.max(cached, sharedPrefix(promptText(earlier.recorded), prompt))
    const promptTokens = Math.ceil(recorded.body.length / 4)
    this.requests.push({ recorded, summary, promptTokens })
    const { window, summaryCachedTokens, failingSummaries } = this.options
    if (window !== undefined && promptTokens > window)
      return {
        status: 400,
        body: {
          error: {
            message: `This model's maximum context length is ${window} tokens; the request has ${promptTokens}.`,
            type: 'invalid_request_error',
            code: 'context_length_exceeded',
          },
        },
      }
    let cachedTokens = this.options.noCacheReads ? 0 : Math.floor(cached / 4)
    if (summary && summaryCachedTokens !== undefined) cachedTokens = Math.min(cachedTokens, summaryCachedTokens)
    const usage = { prompt: promptTokens, cached: cachedTokens }
    if (summary) {
      const number = this.summaryCalls++
      if (failingSummaries?.includes(number)) {
        const status = this.options.failingStatus ?? 503
        const message = status === 503 ? 'The server is overloaded.' : `The request was rejected (${status}).`
        return { status, body: { error: { message, type: status === 503 ? 'server_error' : 'invalid_request_error' } } }
      }
      const scripted = this.options.summaryReplies?.[number]
      if (scripted === 'tool-call')
        return this.reply(
          { call: { id: 'call_summary', name: 'read_file', arguments: '{"path":"more.ts"}' } },
          usage,
          body.stream === true,
        )
      if (scripted === 'truncated')
        return this.reply({ text: '## Goal and Intent\n- read', truncated: true }, usage, body.stream === true)
      // Each summary differs (numbered from 1), so a fold made again never passes for the fold re-applied.
      const text = this.options.summaryText ?? SUMMARY_TEXT
      return this.reply({ text: `${text}\n- summary call ${number + 1}` }, usage, body.stream === true)
    }
    const step = this.conversationRequests++
    if (step < this.steps)
      return this.reply(
        { call: { id: `call_${step}`, name: 'read_file', arguments: JSON.stringify({ path: `file-${step}.ts` }) } },
        usage,
        body.stream === true,
      )
    return this.reply({ text: 'done' }, usage, body.stream === true)
  }

  private reply(
    turn: { text?: string; call?: { id: string; name: string; arguments: string }; truncated?: boolean },
    usage: { prompt: number; cached: number },
    stream: boolean,
  ): Reply {
    if (this.wire === 'anthropic') {
      const content = turn.call
        ? [{ type: 'tool_use', id: turn.call.id, name: turn.call.name, input: JSON.parse(turn.call.arguments) }]
        : [{ type: 'text', text: turn.text }]
      const usageBody = {
        input_tokens: usage.prompt - usage.cached,
        cache_read_input_tokens: usage.cached,
        cache_creation_input_tokens: 0,
        output_tokens: 20,
      }
      const message = {
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        model: 'claude-scripted',
        content,
        stop_reason: turn.call ? 'tool_use' : turn.truncated ? 'max_tokens' : 'end_turn',
        stop_sequence: null,
        usage: usageBody,
      }
      if (!stream) return { status: 200, body: message }
      const events: NamedEvent[] = [
        new NamedEvent('message_start', {
          type: 'message_start',
          message: { ...message, content: [], stop_reason: null },
        }),
      ]
      const block = turn.call
        ? { type: 'tool_use', id: turn.call.id, name: turn.call.name, input: {} }
        : { type: 'text', text: '' }
      events.push(
        new NamedEvent('content_block_start', { type: 'content_block_start', index: 0, content_block: block }),
      )
      const delta = turn.call
        ? { type: 'input_json_delta', partial_json: turn.call.arguments }
        : { type: 'text_delta', text: turn.text }
      events.push(new NamedEvent('content_block_delta', { type: 'content_block_delta', index: 0, delta }))
      events.push(new NamedEvent('content_block_stop', { type: 'content_block_stop', index: 0 }))
      events.push(
        new NamedEvent('message_delta', {
          type: 'message_delta',
          delta: { stop_reason: message.stop_reason, stop_sequence: null },
          usage: { output_tokens: 20 },
        }),
      )
      events.push(new NamedEvent('message_stop', { type: 'message_stop' }))
      return { sse: events, done: false }
    }
    const usageBody = {
      prompt_tokens: usage.prompt,
      completion_tokens: 20,
      total_tokens: usage.prompt + 20,
      prompt_tokens_details: { cached_tokens: usage.cached },
    }
    const toolCalls = turn.call
      ? [{ id: turn.call.id, type: 'function', function: { name: turn.call.name, arguments: turn.call.arguments } }]
      : undefined
    const finish = turn.call ? 'tool_calls' : turn.truncated ? 'length' : 'stop'
    const base = { id: 'chatcmpl-1', created: 1767225600, model: 'scripted-model' }
    if (!stream)
      return {
        status: 200,
        body: {
          ...base,
          object: 'chat.completion',
          choices: [
            {
              index: 0,
              message: {
                role: 'assistant',
                content: turn.text ?? null,
                ...(toolCalls ? { tool_calls: toolCalls } : {}),
              },
              finish_reason: finish,
            },
          ],
          usage: usageBody,
        },
      }
    const chunk = (delta: object, finishReason: string | null = null) => ({
      ...base,
      object: 'chat.completion.chunk',
      choices: [{ index: 0, delta, finish_reason: finishReason }],
    })
    const chunks: object[] = [chunk({ role: 'assistant', content: '' })]
    if (turn.text) chunks.push(chunk({ content: turn.text }))
    if (toolCalls) chunks.push(chunk({ tool_calls: toolCalls.map((call, index) => ({ index, ...call })) }))
    chunks.push(chunk({}, finish), { ...base, object: 'chat.completion.chunk', choices: [], usage: usageBody })
    return { sse: chunks }
  }
}

/** The text of the last text block of the last message (string content or blocks). */
function lastText(messages: Array<{ content: unknown }>): string | undefined {
  const content = messages.at(-1)?.content
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return undefined
  const last = content.at(-1) as { type?: string; text?: string } | undefined
  return last?.type === 'text' ? last.text : undefined
}

/** The request body without its output cap: what a provider's prompt cache keys on. */
function promptText(recorded: RecordedRequest): string {
  const entries = Object.entries(recorded.json as Record<string, unknown>)
  return JSON.stringify(Object.fromEntries(entries.filter(([key]) => !OUTPUT_CAP_KEYS.has(key))))
}

function sharedPrefix(left: string, right: string): number {
  let index = 0
  while (index < left.length && index < right.length && left.charCodeAt(index) === right.charCodeAt(index)) index++
  return index
}
