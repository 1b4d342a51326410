import { once } from 'node:events'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { RequestApi } from '@warmfold/cache-ledger/prefix'
import type { AnswerFacts, Exchange, InboundRequest, ProviderUsage, WarmPlan } from '../../src/index.ts'

/** One request exactly as a client sent it to the capture server. */
export interface CapturedRequest {
  readonly method: string
  readonly url: string
  readonly rawHeaders: readonly string[]
  readonly headers: Readonly<Record<string, string>>
  readonly body: Buffer
}

/**
 * A 127.0.0.1 server that keeps every request an SDK sends (bytes and headers) and answers with the
 * smallest reply each API's SDK accepts; it stands where the proxy's forward room will hand the
 * observer its exchanges.
 */
export class CaptureServer {
  readonly requests: CapturedRequest[] = []
  private readonly server = createServer((request, response) => void this.handle(request, response))

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`
  }

  async start(): Promise<this> {
    this.server.listen(0, '127.0.0.1')
    await once(this.server, 'listening')
    return this
  }

  async close(): Promise<void> {
    this.server.closeAllConnections()
    this.server.close()
    await once(this.server, 'close')
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = []
    for await (const chunk of request) chunks.push(chunk as Buffer)
    const headers: Record<string, string> = {}
    for (const [name, value] of Object.entries(request.headers))
      if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value
    const url = request.url ?? ''
    this.requests.push({
      method: request.method ?? 'POST',
      url,
      rawHeaders: request.rawHeaders,
      headers,
      body: Buffer.concat(chunks),
    })
    const path = new URL(url, this.url).pathname
    response.setHeader('content-type', 'application/json')
    response.end(JSON.stringify(replyFor(path)))
  }
}

function replyFor(path: string): object {
  if (path.endsWith('/chat/completions'))
    return {
      id: 'c',
      object: 'chat.completion',
      created: 0,
      model: 'm',
      choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
    }
  if (path.endsWith('/responses'))
    return {
      id: 'r',
      object: 'response',
      created_at: 0,
      model: 'm',
      status: 'completed',
      output: [
        {
          type: 'message',
          id: 'msg',
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'output_text', text: 'ok', annotations: [] }],
        },
      ],
    }
  if (path.endsWith('/messages'))
    return {
      id: 'a',
      type: 'message',
      role: 'assistant',
      model: 'm',
      content: [{ type: 'text', text: 'ok' }],
      stop_reason: 'end_turn',
      usage: { input_tokens: 1, output_tokens: 1 },
    }
  return { candidates: [{ content: { role: 'model', parts: [{ text: 'ok' }] }, finishReason: 'STOP' }] }
}

/** The API a captured path belongs to (the forward room's routing, as far as these tests need it). */
export function apiOfPath(url: string): RequestApi {
  const path = url.split('?')[0] as string
  if (path.endsWith('/chat/completions')) return 'openai-chat'
  if (path.endsWith('/responses')) return 'openai-responses'
  if (path.endsWith('/messages')) return 'anthropic-messages'
  if (/:(stream)?generateContent$/.test(path)) return 'gemini'
  throw new Error(`no API for ${url}`)
}

/** What a test says about one exchange besides the captured request. */
export interface ExchangeScript {
  readonly id: number
  readonly at: number
  readonly usage?: ProviderUsage
  readonly status?: number
  readonly plan?: WarmPlan
  readonly sent?: Buffer
  readonly providerDiagnosis?: string
  readonly failOpen?: Exchange['failOpen']
  readonly holdReleased?: string
}

/** An exchange as the forward room would hand it over: the captured request, its answer's facts scripted. */
export function exchangeOf(captured: CapturedRequest, script: ExchangeScript): Exchange {
  const api = apiOfPath(captured.url)
  const request: InboundRequest = {
    id: script.id,
    receivedAt: script.at,
    method: captured.method,
    url: captured.url,
    route: { api, kind: 'generate', streamByPath: captured.url.includes(':streamGenerateContent') },
    rawHeaders: captured.rawHeaders,
    headers: captured.headers,
    body: captured.body,
    stream: false,
  }
  const answer: AnswerFacts = {
    status: script.status ?? 200,
    streamed: false,
    content: 'text',
    totalMs: 5,
    firstByteMs: 3,
    ...(script.usage ? { usage: script.usage } : {}),
    ...(script.providerDiagnosis ? { providerDiagnosis: script.providerDiagnosis } : {}),
    ...(script.holdReleased ? { holdReleased: script.holdReleased } : {}),
  }
  return {
    request,
    sent: script.sent ?? captured.body,
    answer,
    ...(script.plan ? { plan: script.plan } : {}),
    ...(script.failOpen ? { failOpen: script.failOpen } : {}),
  }
}

/** Usage with `inputTokens` prompt tokens of which `cacheReadTokens` were read. */
export function usage(inputTokens: number, cacheReadTokens: number, outputTokens = 10): ProviderUsage {
  return { inputTokens, cacheReadTokens, cacheWriteTokens: 0, outputTokens }
}
