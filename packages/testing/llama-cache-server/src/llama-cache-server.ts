import { mkdtemp, rm } from 'node:fs/promises'
import { createServer } from 'node:http'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import type { ChatRequest } from './chat-request.ts'
import { ChatRequestError, parseChatRequest } from './chat-request.ts'
import type { CompletionResult, LlamaCacheRecord } from './llama-cache-engine.ts'
import { ContextSizeExceededError, LlamaCacheEngine } from './llama-cache-engine.ts'
import type { ResponseIdentity, WireError } from './openai-wire.ts'
import { choiceChunk, completionBody, usageChunk, wireError, wireTimings } from './openai-wire.ts'
import { SerialQueue } from './serial-queue.ts'
import { writeTinyGguf } from './write-tiny-gguf.ts'

/** Options of {@link startLlamaCacheServer}. */
export interface LlamaCacheServerOptions {
  /** A GGUF model to serve. Default: a {@link writeTinyGguf} model generated into a temp dir (removed on close). */
  modelPath?: string
  /** Context size per slot, in tokens. Default 32768. A prompt of this many tokens or more is rejected. */
  contextSize?: number
  /** Context sequences, each keeping its own KV cache (llama-server `-np`). Default 1. */
  slots?: number
  /** Output cap when a request names none (`max_completion_tokens` / `max_tokens`). Default 16. */
  maxTokens?: number
  /** CPU threads for evaluation. Default 2 (more threads than cores is several times slower). */
  threads?: number
  /** TCP port on 127.0.0.1. Default 0: a free port chosen by the OS. */
  port?: number
}

/** A running server. */
export interface LlamaCacheServer {
  /** `http://127.0.0.1:<port>`. Routes answer both with and without the `/v1` prefix, as llama-server's do. */
  readonly url: string
  /** `<url>/v1`, for clients that append `/chat/completions` to an OpenAI base URL. */
  readonly baseURL: string
  readonly port: number
  /** The model file served (the generated one unless `modelPath` was given). */
  readonly modelPath: string
  /** Tokens per slot as the context was created. */
  readonly contextSize: number
  /** One record per request that reached the engine (rejected requests are not recorded). */
  readonly records: readonly LlamaCacheRecord[]
  /** Stops accepting requests, waits for the queued ones, then frees the server, the engine and a generated model. */
  close(): Promise<void>
}

const MAX_BODY_BYTES = 64 * 1024 * 1024

function positiveInteger(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback
  if (!Number.isInteger(value) || value < 1)
    throw new RangeError(`startLlamaCacheServer: ${name} must be a positive integer, got ${value}`)
  return value
}

/** A failure answered with `status` and the OpenAI error envelope of `type` and `message`. */
class HttpError extends Error {
  readonly body: WireError

  constructor(
    readonly status: number,
    type: string,
    message: string,
    extra?: Record<string, unknown>,
  ) {
    super(message)
    this.body = wireError(status, type, message, extra)
  }
}

async function readJson(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of request) {
    size += (chunk as Buffer).length
    if (size > MAX_BODY_BYTES)
      throw new HttpError(413, 'invalid_request_error', `the request body exceeds ${MAX_BODY_BYTES} bytes`)
    chunks.push(chunk as Buffer)
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'))
  } catch (error) {
    throw new HttpError(400, 'invalid_request_error', `the request body is not valid JSON: ${(error as Error).message}`)
  }
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body)
  response.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  })
  response.end(text)
}

/**
 * Starts an OpenAI-compatible chat-completions server on 127.0.0.1 backed by a real llama.cpp KV
 * cache (node-llama-cpp, prebuilt CPU binary). Every response reports how many prompt tokens the
 * engine reused and evaluated, with llama-server's field names.
 *
 * Routes (`/v1` prefix optional): `POST /chat/completions`, `GET /models`, `GET /health`.
 */
export async function startLlamaCacheServer(options: LlamaCacheServerOptions = {}): Promise<LlamaCacheServer> {
  const contextSize = positiveInteger('contextSize', options.contextSize, 32768)
  const slots = positiveInteger('slots', options.slots, 1)
  const defaultMaxTokens = positiveInteger('maxTokens', options.maxTokens, 16)
  const threads = positiveInteger('threads', options.threads, 2)
  let temporaryDirectory: string | undefined
  let modelPath = options.modelPath
  if (modelPath === undefined) {
    temporaryDirectory = await mkdtemp(join(tmpdir(), 'llama-cache-server-'))
    modelPath = join(temporaryDirectory, 'tiny-llama.gguf')
    await writeTinyGguf(modelPath, { contextLength: Math.max(32768, contextSize) })
  }
  let engine: LlamaCacheEngine
  try {
    engine = await LlamaCacheEngine.load({ modelPath, contextSize, slots, threads })
  } catch (error) {
    if (temporaryDirectory !== undefined) await rm(temporaryDirectory, { recursive: true, force: true })
    throw error
  }
  const modelId = basename(modelPath)
  const records: LlamaCacheRecord[] = []
  const queue = new SerialQueue()
  let closing = false
  let responses = 0

  const serve = async (request: ChatRequest, response: ServerResponse): Promise<void> => {
    const identity: ResponseIdentity = {
      id: `chatcmpl-llama-cache-${++responses}`,
      created: Math.floor(Date.now() / 1000),
      model: request.model ?? modelId,
    }
    const maxTokens = request.maxTokens ?? defaultMaxTokens
    const abort = new AbortController()
    response.on('close', () => {
      if (!response.writableFinished) abort.abort()
    })
    const write = (chunk: unknown): void => {
      if (!response.destroyed) response.write(`data: ${JSON.stringify(chunk)}\n\n`)
    }
    const tokens = engine.tokenize(request.prompt)
    // Before any header is written, so a prompt that does not fit gets a plain HTTP 400 even when streamed.
    engine.assertFits(tokens)
    let result: CompletionResult
    if (request.stream) {
      response.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache',
        connection: 'keep-alive',
      })
      write(choiceChunk(identity, { role: 'assistant', content: '' }, null, request.includeUsage))
      result = await engine.complete(tokens, {
        maxTokens,
        signal: abort.signal,
        onText: (delta) => write(choiceChunk(identity, { content: delta }, null, request.includeUsage)),
      })
      const finish = choiceChunk(identity, {}, result.finishReason, request.includeUsage)
      // llama-server puts `timings` on the last chunk before [DONE].
      write(request.includeUsage ? finish : { ...finish, timings: wireTimings(result) })
      if (request.includeUsage) write(usageChunk(identity, result))
      if (!response.destroyed) response.end('data: [DONE]\n\n')
    } else {
      result = await engine.complete(tokens, { maxTokens, signal: abort.signal })
      sendJson(response, 200, completionBody(identity, result))
    }
    records.push({
      promptTokens: result.promptTokens,
      cachedTokens: result.cachedTokens,
      evaluatedTokens: result.evaluatedTokens,
      completionTokens: result.completionTokens,
      slot: result.slot,
      firstDifferentIndex: result.firstDifferentIndex,
    })
  }

  const route = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const path = new URL(request.url ?? '/', 'http://127.0.0.1').pathname.replace(/^\/v1(?=\/)/, '')
    if (request.method === 'GET' && path === '/health') return sendJson(response, 200, { status: 'ok' })
    if (request.method === 'GET' && path === '/models') {
      return sendJson(response, 200, {
        object: 'list',
        data: [{ id: modelId, object: 'model', created: 0, owned_by: 'llama-cache-server' }],
      })
    }
    if (request.method !== 'POST' || path !== '/chat/completions')
      throw new HttpError(404, 'not_found_error', `no route for ${request.method} ${request.url}`)
    let chatRequest: ChatRequest
    try {
      chatRequest = parseChatRequest(await readJson(request))
    } catch (error) {
      if (error instanceof ChatRequestError) throw new HttpError(400, 'invalid_request_error', error.message)
      throw error
    }
    // Checked in the same tick as queueing: close() waits for everything queued before it started.
    if (closing) throw new HttpError(503, 'unavailable_error', 'the server is shutting down')
    await queue.run(() => serve(chatRequest, response))
  }

  const server = createServer((request, response) => {
    route(request, response).catch((error: unknown) => {
      const { status, body } =
        error instanceof HttpError
          ? error
          : error instanceof ContextSizeExceededError
            ? new HttpError(400, 'exceed_context_size_error', error.message, {
                n_prompt_tokens: error.promptTokens,
                n_ctx: error.contextSize,
              })
            : new HttpError(500, 'server_error', error instanceof Error ? error.message : String(error))
      if (!response.headersSent) sendJson(response, status, body)
      else if (!response.destroyed) response.end(`data: ${JSON.stringify(body)}\n\n`)
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve())
  })
  const port = (server.address() as AddressInfo).port
  const url = `http://127.0.0.1:${port}`
  let closed: Promise<void> | undefined

  return {
    url,
    baseURL: `${url}/v1`,
    port,
    modelPath,
    contextSize: engine.contextSize,
    records,
    close() {
      closed ??= (async () => {
        closing = true
        await queue.idle()
        await new Promise<void>((resolve) => {
          server.close(() => resolve())
          server.closeAllConnections()
        })
        await engine.dispose()
        if (temporaryDirectory !== undefined) await rm(temporaryDirectory, { recursive: true, force: true })
      })()
      return closed
    },
  }
}
