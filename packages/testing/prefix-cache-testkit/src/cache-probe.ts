import type { GenerateOptions } from '@warmfold/llm'
import { ContentAssembler, promptTokensOf } from '@warmfold/llm'
import type { Dialect } from '@warmfold/llm-openai-compatible'
import { ChatCompletionsAdapter, parseOpenAICompatibleConfig, resolveApiKey } from '@warmfold/llm-openai-compatible'

/** Where and how the probe sends requests. */
export interface CacheProbeOptions {
  /** Base URL of an OpenAI-compatible endpoint (requests go to `{baseURL}/chat/completions`). */
  readonly baseURL: string
  /** Model id sent to the endpoint. Default `probe` (the embedded llama cache server accepts any). */
  readonly model?: string
  /** Wire dialect; decides how usage is read and how the effort is sent. Default `llamacpp`. */
  readonly dialect?: Dialect
  /** Environment variable with the endpoint's API key; none for local servers. */
  readonly apiKeyEnv?: string
  /** Milliseconds to wait for each response. Default 600000. */
  readonly timeoutMs?: number
}

/** What the real endpoint reported for one probed request. */
export interface ProbeRecord {
  readonly index: number
  readonly purpose: string
  readonly promptTokens: number
  readonly cachedTokens: number
  readonly uncachedTokens: number
}

/**
 * Sends each request of a workload, unchanged but for a 1-token output cap and the endpoint's
 * model id, to a real OpenAI-compatible endpoint through `@warmfold/llm-openai-compatible`, and
 * records the cached tokens the server reports. The scripted model still supplies the
 * conversation's content; the probe only measures what a real cache reuses.
 */
export class CacheProbe {
  readonly records: ProbeRecord[] = []
  private readonly adapter: ChatCompletionsAdapter
  private readonly model: string

  constructor(readonly options: CacheProbeOptions) {
    this.model = options.model ?? 'probe'
    const config = parseOpenAICompatibleConfig({
      provider: 'cache-probe',
      baseURL: options.baseURL,
      models: { [this.model]: { contextWindow: 10_000_000 } },
      dialect: options.dialect ?? 'llamacpp',
      ...(options.apiKeyEnv ? { apiKeyEnv: options.apiKeyEnv } : {}),
      ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
    })
    this.adapter = new ChatCompletionsAdapter({ ...config, apiKey: resolveApiKey(config) })
  }

  /**
   * Probes one request and records the endpoint's answer.
   * @throws Error naming the endpoint when it fails or reports no cached-token count.
   */
  async probe(request: GenerateOptions): Promise<ProbeRecord> {
    const index = this.records.length
    const assembler = new ContentAssembler()
    const sent: GenerateOptions = { ...request, provider: 'cache-probe', model: this.model, maxTokens: 1, signal: undefined }
    try {
      for await (const chunk of this.adapter.stream(sent)) assembler.push(chunk)
    } catch (error) {
      throw new Error(`cache probe: request ${index} (${request.purpose ?? 'unspecified'}) to ${this.options.baseURL} failed: ${(error as Error).message}`, { cause: error })
    }
    const usage = assembler.result().usage
    const promptTokens = usage ? promptTokensOf(usage) : undefined
    if (!usage || promptTokens === undefined) throw new Error(`cache probe: ${this.options.baseURL} reported no prompt usage for request ${index}`)
    if (usage.cacheReadTokens === undefined) {
      throw new Error(`cache probe: ${this.options.baseURL} does not report cached tokens (vLLM needs --enable-prompt-tokens-details, SGLang --enable-cache-report)`)
    }
    const record = Object.freeze({ index, purpose: request.purpose ?? 'unspecified', promptTokens, cachedTokens: usage.cacheReadTokens, uncachedTokens: promptTokens - usage.cacheReadTokens })
    this.records.push(record)
    return record
  }
}
