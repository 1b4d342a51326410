import type { GenerateOptions, LlmAdapter } from '@warmfold/llm'
import { ContentAssembler, LlmError, promptTokensOf } from '@warmfold/llm'
import { normalizeApiKey, secretRedactor } from '@warmfold/llm/adapter'
import type { Dialect } from '@warmfold/llm-openai-compatible'
import { ChatCompletionsAdapter, parseOpenAICompatibleConfig } from '@warmfold/llm-openai-compatible'
import { CacheProbeError } from './cache-probe-error.ts'

/** What a {@link ProbeConnector} is given to build its adapter. */
export interface ProbeConnectOptions {
  /** The endpoint's base URL, as configured. */
  readonly baseURL: string
  /** The model id to send. */
  readonly model: string
  /** The API key read from `apiKeyEnv` (trimmed), or `undefined` for a local server without keys. */
  readonly apiKey: string | undefined
  /** Milliseconds the adapter may wait for the response headers, and then for stream progress. */
  readonly timeoutMs: number
  /** The fetch the adapter must send with: the probe keeps each answer's status and body for its errors. */
  readonly fetch: typeof fetch
}

/** An adapter for one wire format, and the URL its requests go to (named in errors). */
export interface ProbeConnection {
  readonly adapter: LlmAdapter
  readonly url: string
}

/**
 * Builds the adapter the probe sends through. The default speaks OpenAI-compatible chat
 * completions in the probe's `dialect`; `warmfold bench --probe-dialect` passes one per wire format
 * (OpenAI Responses, Anthropic, Gemini). The adapter must route its requests through `fetch`.
 */
export type ProbeConnector = (options: ProbeConnectOptions) => ProbeConnection

/** Where and how the probe sends requests. */
export interface CacheProbeOptions {
  /**
   * Base URL of the endpoint (chat completions requests go to `{baseURL}/chat/completions`);
   * no credentials, query or fragment.
   */
  readonly baseURL: string
  /** Model id sent to the endpoint. Default `probe` (the embedded llama cache server accepts any). */
  readonly model?: string
  /**
   * Chat completions dialect of the default connector; decides how usage is read and
   * how the effort is sent. Default `llamacpp`.
   */
  readonly dialect?: Dialect
  /** Builds the adapter for another wire format; default chat completions in `dialect`. */
  readonly connect?: ProbeConnector
  /** Environment variable with the endpoint's API key; none for local servers. */
  readonly apiKeyEnv?: string
  /** Milliseconds to wait for each whole response. Default {@link DEFAULT_PROBE_TIMEOUT_MS}. */
  readonly timeoutMs?: number
}

/**
 * Default wait for one probed response: a 1-token answer from a hosted API takes seconds, and a
 * silent endpoint should fail a run in minutes, not hours. A local server that evaluates a long
 * cold prompt on a CPU can need more; raise `timeoutMs` for it.
 */
export const DEFAULT_PROBE_TIMEOUT_MS = 120_000

/** What the real endpoint reported for one probed request. */
export interface ProbeRecord {
  readonly index: number
  readonly purpose: string
  readonly promptTokens: number
  readonly cachedTokens: number
  readonly uncachedTokens: number
  /**
   * The part of `uncachedTokens` the endpoint reported as written to its cache (Anthropic, OpenAI's
   * newest models); `undefined` when it does not report writes.
   */
  readonly cacheWriteTokens?: number
}

/** What the endpoint answered to the request in flight, for error messages. */
interface Answer {
  status?: number
  contentType?: string
  body?: string
}

/** Characters of an answer quoted in an error message. */
const QUOTED_CHARS = 240

/**
 * Sends each request of a workload, unchanged but for a 1-token output cap and the endpoint's
 * model id, to a real endpoint through a warmfold adapter (OpenAI-compatible chat completions by
 * default, any wire format through `connect`), and records the cached tokens the server reports. The scripted model
 * still supplies the conversation's content; the probe only measures what a real cache reuses. Requests are sent
 * one at a time (the workload is sequential).
 */
export class CacheProbe {
  readonly records: ProbeRecord[] = []
  /** The URL every request goes to, e.g. `{baseURL}/chat/completions`. */
  readonly url: string
  private readonly adapter: LlmAdapter
  private readonly model: string
  private readonly redact: (text: string) => string
  private answer: Answer | undefined

  /**
   * @throws TypeError naming the option when `baseURL` is not a plain http(s) base URL or the
   *   config is invalid (never quoting credentials); Error naming the variable when `apiKeyEnv`
   *   is unset or empty.
   */
  constructor(readonly options: CacheProbeOptions) {
    this.model = options.model ?? 'probe'
    checkBaseURL(options.baseURL)
    const apiKey = readApiKey(options.apiKeyEnv)
    // The key as sent (trimmed): a server may echo it into its body.
    this.redact = secretRedactor(apiKey).text
    const connect = options.connect ?? chatCompletions(options.dialect ?? 'llamacpp')
    const connection = connect({
      baseURL: options.baseURL,
      model: this.model,
      apiKey,
      timeoutMs: options.timeoutMs ?? DEFAULT_PROBE_TIMEOUT_MS,
      fetch: this.fetchKeepingAnswers,
    })
    this.url = connection.url
    this.adapter = connection.adapter
  }

  /**
   * Probes one request and records the endpoint's answer.
   * @throws CacheProbeError naming the request, the URL and what the endpoint answered (HTTP
   *   status and the start of its body, or the connection failure), when the request fails or
   *   the answer carries no prompt or cached-token count.
   */
  async probe(request: GenerateOptions): Promise<ProbeRecord> {
    const index = this.records.length
    const purpose = request.purpose ?? 'unspecified'
    const assembler = new ContentAssembler()
    const sent: GenerateOptions = {
      ...request,
      provider: 'cache-probe',
      model: this.model,
      maxTokens: 1,
      signal: undefined,
    }
    this.answer = undefined
    try {
      for await (const chunk of this.adapter.stream(sent)) assembler.push(chunk)
    } catch (error) {
      throw this.failure(`cache probe: request ${index} (${purpose}) to ${this.url} failed`, error)
    }
    const usage = assembler.result().usage
    const promptTokens = usage ? promptTokensOf(usage) : undefined
    if (!usage || promptTokens === undefined)
      throw this.unmeasured(
        'NO_USAGE',
        `cache probe: ${this.url} reported no prompt usage for request ${index} (${purpose})${this.quoteAnswer()}`,
      )
    if (usage.cacheReadTokens === undefined)
      throw this.unmeasured(
        'NO_CACHED_TOKENS',
        `cache probe: ${this.url} does not report cached tokens (vLLM needs --enable-prompt-tokens-details, ` +
          `SGLang --enable-cache-report)`,
      )
    const written = usage.cacheWriteTokens === undefined ? {} : { cacheWriteTokens: usage.cacheWriteTokens }
    const record: ProbeRecord = Object.freeze({
      index,
      purpose,
      promptTokens,
      cachedTokens: usage.cacheReadTokens,
      uncachedTokens: promptTokens - usage.cacheReadTokens,
      ...written,
    })
    this.records.push(record)
    return record
  }

  /**
   * The error of a failed request: the adapter's message (already redacted), plus the
   * answer's start when it was not a stream.
   */
  private failure(where: string, error: unknown): CacheProbeError {
    if (!LlmError.isInstance(error)) {
      const text = error instanceof Error ? error.message : String(error)
      return new CacheProbeError(`${where}: ${oneLine(this.redact(text))}`, 'UNKNOWN', this.url, this.answer?.status, {
        cause: error,
      })
    }
    const detail = oneLine(error.message.replace(/^cache-probe: /, ''))
    // A 200 whose body is not an event stream (a login page, a proxy's banner, a non-streaming
    // server): the adapter only saw no chunks, so quote what the endpoint really sent.
    const answered = error.code === 'STREAM_INCOMPLETE' || error.code === 'INVALID_RESPONSE' ? this.quoteAnswer() : ''
    const hint = error.status === 404 ? ' (is the base URL right? Many servers serve the API under /v1)' : ''
    return new CacheProbeError(
      `${where}: ${detail}${answered}${hint}`,
      error.code,
      this.url,
      error.status ?? this.answer?.status,
      { cause: error },
    )
  }

  /**
   * The error of an answer without the numbers the probe measures, with its HTTP status (a method: `probe` resets
   * `answer` before awaiting).
   */
  private unmeasured(failure: string, message: string): CacheProbeError {
    return new CacheProbeError(message, failure, this.url, this.answer?.status)
  }

  /** `; the endpoint answered HTTP 200 (text/plain), body: …`, or '' when no body was read. */
  private quoteAnswer(): string {
    const answer = this.answer
    if (answer?.status === undefined || answer.body === undefined) return ''
    const body = oneLine(this.redact(answer.body))
    const type = answer.contentType ? ` (${answer.contentType})` : ''
    return `; the endpoint answered HTTP ${answer.status}${type}${body ? `, body: ${body}` : ' with an empty body'}`
  }

  /**
   * Sends the adapter's requests and keeps the status, content type and (for a successful
   * status) the body of the answer. A 1-token answer is small, so it is read whole; the
   * timeout then covers the whole response. Failed answers pass through: the adapter reads
   * their bodies itself.
   */
  private readonly fetchKeepingAnswers = async (
    input: string | URL | Request,
    init?: RequestInit,
  ): Promise<Response> => {
    const answer: Answer = {}
    this.answer = answer
    const response = await fetch(input, init)
    answer.status = response.status
    answer.contentType = response.headers.get('content-type') ?? undefined
    if (!response.ok) return response
    answer.body = await response.text()
    const headers = new Headers(response.headers)
    // The text is decoded already; its length is not the wire length.
    headers.delete('content-encoding')
    headers.delete('content-length')
    return new Response(answer.body, { status: response.status, statusText: response.statusText, headers })
  }
}

/** The default connector: OpenAI-compatible chat completions in `dialect`, at `{baseURL}/chat/completions`. */
export function chatCompletions(dialect: Dialect): ProbeConnector {
  return ({ baseURL, model, apiKey, timeoutMs, fetch }) => {
    const config = parseOpenAICompatibleConfig({
      provider: 'cache-probe',
      baseURL,
      models: { [model]: { contextWindow: 10_000_000 } },
      dialect,
      timeoutMs,
    })
    return {
      adapter: new ChatCompletionsAdapter({ ...config, apiKey, fetch }),
      url: `${baseURL.replace(/\/+$/, '')}/chat/completions`,
    }
  }
}

/**
 * The key in `name`, trimmed, or `undefined` when no variable is named.
 * @throws Error naming the variable (never its value) when it is unset or blank.
 */
function readApiKey(name: string | undefined): string | undefined {
  if (name === undefined) return undefined
  const value = process.env[name]
  if (value === undefined || value === '')
    throw new Error(`CacheProbe: apiKeyEnv names the environment variable ${name}, which is not set or empty`)
  return normalizeApiKey(value, `CacheProbe: the environment variable ${name} (apiKeyEnv)`)
}

/**
 * Refuses what the config parser does not: a query or fragment, which the request path would
 * be appended to. Credentials are refused by the config parser without quoting them.
 */
function checkBaseURL(baseURL: string): void {
  const url = URL.canParse(baseURL) ? new URL(baseURL) : undefined
  if (url && (url.search || url.hash))
    throw new TypeError(
      `CacheProbe: baseURL must not carry a query or fragment (requests go to {baseURL}/chat/completions), got ` +
        `${url.origin}${url.pathname}?…`,
    )
}

/** Whitespace collapsed to single spaces and cut to {@link QUOTED_CHARS}. */
function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim()
  return flat.length > QUOTED_CHARS ? `${flat.slice(0, QUOTED_CHARS)}…` : flat
}
