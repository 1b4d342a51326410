import type { GenerateOptions } from '@warmfold/llm'
import { ContentAssembler, LlmError, promptTokensOf } from '@warmfold/llm'
import type { Dialect } from '@warmfold/llm-openai-compatible'
import { ChatCompletionsAdapter, parseOpenAICompatibleConfig, redactor, resolveApiKey } from '@warmfold/llm-openai-compatible'
import { CacheProbeError } from './cache-probe-error.ts'

/** Where and how the probe sends requests. */
export interface CacheProbeOptions {
  /** Base URL of an OpenAI-compatible endpoint (requests go to `{baseURL}/chat/completions`); no credentials, query or fragment. */
  readonly baseURL: string
  /** Model id sent to the endpoint. Default `probe` (the embedded llama cache server accepts any). */
  readonly model?: string
  /** Wire dialect; decides how usage is read and how the effort is sent. Default `llamacpp`. */
  readonly dialect?: Dialect
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
}

/** What the endpoint answered to the request in flight, for error messages. */
interface Answer {
  readonly url: string
  status?: number
  contentType?: string
  body?: string
}

/** Characters of an answer quoted in an error message. */
const QUOTED_CHARS = 240

/**
 * Sends each request of a workload, unchanged but for a 1-token output cap and the endpoint's
 * model id, to a real OpenAI-compatible endpoint through `@warmfold/llm-openai-compatible`, and
 * records the cached tokens the server reports. The scripted model still supplies the
 * conversation's content; the probe only measures what a real cache reuses. Requests are sent
 * one at a time (the workload is sequential).
 */
export class CacheProbe {
  readonly records: ProbeRecord[] = []
  /** The URL every request goes to: `{baseURL}/chat/completions`. */
  readonly url: string
  private readonly adapter: ChatCompletionsAdapter
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
    const config = parseOpenAICompatibleConfig({
      provider: 'cache-probe',
      baseURL: options.baseURL,
      models: { [this.model]: { contextWindow: 10_000_000 } },
      dialect: options.dialect ?? 'llamacpp',
      timeoutMs: options.timeoutMs ?? DEFAULT_PROBE_TIMEOUT_MS,
      ...(options.apiKeyEnv ? { apiKeyEnv: options.apiKeyEnv } : {}),
    })
    const apiKey = resolveApiKey(config)
    // The key as configured and as sent (trimmed): a server may echo either into its body.
    const redactKey = redactor(apiKey)
    const redactTrimmed = redactor(apiKey?.trim())
    this.redact = (text) => redactTrimmed(redactKey(text))
    this.url = `${options.baseURL.replace(/\/+$/, '')}/chat/completions`
    this.adapter = new ChatCompletionsAdapter({ ...config, apiKey, fetch: this.fetchKeepingAnswers })
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
    const sent: GenerateOptions = { ...request, provider: 'cache-probe', model: this.model, maxTokens: 1, signal: undefined }
    this.answer = undefined
    try {
      for await (const chunk of this.adapter.stream(sent)) assembler.push(chunk)
    } catch (error) {
      throw this.failure(`cache probe: request ${index} (${purpose}) to ${this.url} failed`, error)
    }
    const usage = assembler.result().usage
    const promptTokens = usage ? promptTokensOf(usage) : undefined
    if (!usage || promptTokens === undefined) {
      throw new CacheProbeError(`cache probe: ${this.url} reported no prompt usage for request ${index} (${purpose})${this.quoteAnswer()}`, 'NO_USAGE', this.url, this.answeredStatus())
    }
    if (usage.cacheReadTokens === undefined) {
      throw new CacheProbeError(
        `cache probe: ${this.url} does not report cached tokens (vLLM needs --enable-prompt-tokens-details, SGLang --enable-cache-report)`,
        'NO_CACHED_TOKENS',
        this.url,
        this.answeredStatus(),
      )
    }
    const record = Object.freeze({ index, purpose, promptTokens, cachedTokens: usage.cacheReadTokens, uncachedTokens: promptTokens - usage.cacheReadTokens })
    this.records.push(record)
    return record
  }

  /** The error of a failed request: the adapter's message (already redacted), plus the answer's start when it was not a stream. */
  private failure(where: string, error: unknown): CacheProbeError {
    if (!LlmError.isInstance(error)) {
      const text = error instanceof Error ? error.message : String(error)
      return new CacheProbeError(`${where}: ${oneLine(this.redact(text))}`, 'UNKNOWN', this.url, this.answer?.status, { cause: error })
    }
    const detail = oneLine(error.message.replace(/^cache-probe: /, ''))
    // A 200 whose body is not an event stream (a login page, a proxy's banner, a non-streaming
    // server): the adapter only saw no chunks, so quote what the endpoint really sent.
    const answered = error.code === 'STREAM_INCOMPLETE' || error.code === 'INVALID_RESPONSE' ? this.quoteAnswer() : ''
    const hint = error.status === 404 ? ' (is the base URL right? Many servers serve the API under /v1)' : ''
    return new CacheProbeError(`${where}: ${detail}${answered}${hint}`, error.code, this.url, error.status ?? this.answer?.status, { cause: error })
  }

  /** The HTTP status of the answer to the request in flight (a method: `probe` resets the field before awaiting). */
  private answeredStatus(): number | undefined {
    return this.answer?.status
  }

  /** `; the endpoint answered HTTP 200 (text/plain), body: …`, or '' when no body was read. */
  private quoteAnswer(): string {
    const answer = this.answer
    if (answer?.status === undefined || answer.body === undefined) return ''
    const body = oneLine(this.redact(answer.body))
    return `; the endpoint answered HTTP ${answer.status}${answer.contentType ? ` (${answer.contentType})` : ''}${body ? `, body: ${body}` : ' with an empty body'}`
  }

  /**
   * Sends the adapter's requests and keeps the status, content type and (for a successful
   * status) the body of the answer. A 1-token answer is small, so it is read whole; the
   * timeout then covers the whole response. Failed answers pass through: the adapter reads
   * their bodies itself.
   */
  private readonly fetchKeepingAnswers = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const answer: Answer = { url: typeof input === 'string' ? input : input instanceof URL ? input.href : input.url }
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

/**
 * Refuses what the config parser does not: a query or fragment, which the request path would
 * be appended to. Credentials are refused by the config parser without quoting them.
 */
function checkBaseURL(baseURL: string): void {
  let url: URL
  try {
    url = new URL(baseURL)
  } catch {
    return
  }
  if (url.search || url.hash) throw new TypeError(`CacheProbe: baseURL must not carry a query or fragment (requests go to {baseURL}/chat/completions), got ${url.origin}${url.pathname}?…`)
}

/** Whitespace collapsed to single spaces and cut to {@link QUOTED_CHARS}. */
function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim()
  return flat.length > QUOTED_CHARS ? `${flat.slice(0, QUOTED_CHARS)}…` : flat
}
