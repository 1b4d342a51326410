import type { RecordedRequest, Reply } from '@warmfold/test-utils'
import { RecordingServer } from '@warmfold/test-utils'
import type { ScriptedTurn, ScriptedUsage } from './wire-replies.ts'
import { anthropicReply, chatReply, geminiReply, responsesReply } from './wire-replies.ts'

/** The wire APIs the scripted upstream speaks. */
export type ScriptedApi = 'openai-chat' | 'openai-responses' | 'gemini' | 'anthropic-messages'

/** What a request is, for the script: the agent's turn, its summary (compaction) call, or a side call. */
export type RequestKind = 'conversation' | 'summary' | 'side'

/** One agent's conversation, scripted: how to tell its requests apart and what the model answers. */
export interface AgentScript {
  readonly api: ScriptedApi
  /** Tells a request's kind from its body (`request.json`) and url. */
  classify(request: RecordedRequest): RequestKind
  /** The model's turns (tool calls, or text), one per conversation request, before its final answer. */
  readonly plan: readonly ScriptedTurn[]
  /** The text answer to a summary request (`summaries` summary requests came before it). */
  summary(request: RecordedRequest, summaries: number): string
  /** The answer to a side request (titles, next-speaker checks, …). */
  side(request: RecordedRequest): ScriptedTurn
  /** The final answer once the plan is done. */
  readonly finalText: string
}

/** One recorded request with the kind the script gave it. */
export interface ClassifiedRequest {
  readonly index: number
  readonly kind: RequestKind
  readonly request: RecordedRequest
}

/** A started scripted upstream. */
export interface ScriptedAgentServer {
  /** `http://127.0.0.1:<port>` (no path). */
  readonly origin: string
  /** Every request in arrival order, with its kind. */
  readonly requests: readonly ClassifiedRequest[]
  close(): Promise<void>
}

/** Characters per token the scripted server reports usage with (a rough English-text rate). */
export const CHARS_PER_TOKEN = 4

/**
 * A real HTTP server on 127.0.0.1 that plays the model for one agent run: conversation requests get
 * the script's tool calls in order and then its final text, summary requests a summary, side requests
 * what the script says. Usage reports the request body's length / {@link CHARS_PER_TOKEN} as input.
 */
export async function startScriptedAgentServer(script: AgentScript): Promise<ScriptedAgentServer> {
  const requests: ClassifiedRequest[] = []
  let step = 0
  let summaries = 0
  let serial = 0
  const server = await RecordingServer.start((request, index) => {
    if (request.method !== 'POST' || request.json === undefined) {
      requests.push({ index, kind: 'side', request })
      return { status: 404, body: { error: { message: `scripted server: no route ${request.method} ${request.url}` } } }
    }
    if (request.url.includes(':countTokens') || request.url.includes('/count_tokens')) {
      const tokens = Math.ceil(request.body.length / CHARS_PER_TOKEN)
      requests.push({ index, kind: 'side', request })
      return {
        status: 200,
        body: request.url.includes(':countTokens') ? { totalTokens: tokens } : { input_tokens: tokens },
      }
    }
    const kind = script.classify(request)
    requests.push({ index, kind, request })
    let turn: ScriptedTurn
    if (kind === 'summary') turn = { kind: 'text', text: script.summary(request, summaries++) }
    else if (kind === 'side') turn = script.side(request)
    else if (step < script.plan.length) turn = script.plan[step++] as ScriptedTurn
    else turn = { kind: 'text', text: script.finalText }
    const usage: ScriptedUsage = { input: Math.ceil(request.body.length / CHARS_PER_TOKEN), output: 50 }
    return encode(script.api, request, turn, usage, serial++)
  })
  return {
    origin: server.origin,
    requests,
    close: () => server.close(),
  }
}

function encode(
  api: ScriptedApi,
  request: RecordedRequest,
  turn: ScriptedTurn,
  usage: ScriptedUsage,
  serial: number,
): Reply {
  const body = request.json as Record<string, unknown>
  const model = typeof body.model === 'string' ? body.model : 'scripted-model'
  switch (api) {
    case 'openai-chat':
      return chatReply(turn, body.stream === true, usage, model)
    case 'openai-responses':
      return responsesReply(turn, usage, model, serial)
    case 'anthropic-messages':
      return anthropicReply(turn, body.stream === true, usage, model, serial)
    case 'gemini': {
      const urlModel = /models\/([^:/?]+)/.exec(request.url)?.[1] ?? 'scripted-model'
      return geminiReply(turn, request.url.includes(':streamGenerateContent'), usage, urlModel)
    }
  }
}
