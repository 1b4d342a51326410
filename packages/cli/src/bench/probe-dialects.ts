import type { GenerateOptions, ModelInfo, StreamChunk } from '@warmfold/llm'
import { LlmAdapter } from '@warmfold/llm'
import type { AnthropicLlmAdapter, parseAnthropicConfig } from '@warmfold/llm-anthropic'
import type { GoogleLlmAdapter, parseGoogleConfig, thinkingTable } from '@warmfold/llm-google'
import type { parseResponsesConfig, ResponsesLlmAdapter } from '@warmfold/llm-openai-responses'
import type { Dialect } from '@warmfold/llm-openai-compatible'
import { DIALECTS } from '@warmfold/llm-openai-compatible'
import type { ProbeConnection, ProbeConnectOptions, ProbeConnector } from '@warmfold/prefix-cache-testkit'
import { chatCompletions } from '@warmfold/prefix-cache-testkit'
import { loadOptionalPackage } from '../shared/load-optional-package.ts'

/**
 * Wire formats other than chat completions, each spoken by an adapter package the CLI loads on demand (an optional
 * peer of the CLI): the package, what it brings, and how a probe connects with it.
 */
const OTHER_WIRES = {
  'openai-responses': {
    package: '@warmfold/llm-openai-responses',
    what: 'the OpenAI Responses adapter',
    connect: responsesConnection,
  },
  anthropic: {
    package: '@warmfold/llm-anthropic',
    what: 'the Anthropic Messages adapter',
    connect: anthropicConnection,
  },
  gemini: { package: '@warmfold/llm-google', what: 'the Gemini adapter on @google/genai', connect: geminiConnection },
} as const

/** Every `--probe-dialect`: the chat completions dialects, then the other wire formats. */
export const PROBE_DIALECTS: readonly ProbeDialect[] = [...DIALECTS, ...(Object.keys(OTHER_WIRES) as OtherWire[])]

type OtherWire = keyof typeof OTHER_WIRES

/** A `--probe-dialect` value. */
export type ProbeDialect = Dialect | OtherWire

/**
 * Dialects whose endpoints report the tokens they wrote to the cache, so a price that bills writes
 * above input (`--price openai`, `anthropic-5m`) prices what they report. The others report reads
 * only, and such a price would count every uncached token as unwritten.
 */
export const REPORTS_CACHE_WRITES: ReadonlySet<ProbeDialect> = new Set<ProbeDialect>([
  'openai',
  'openai-responses',
  'anthropic',
])

/**
 * Thinking levels of a Gemini probe whose model id names no known family (a local server's
 * `probe`): each bench effort on its own level, so each stays its own cache family.
 */
const GEMINI_PROBE_LEVELS = Object.freeze({ low: 'low', high: 'medium', max: 'high' } as const)

/**
 * Anthropic requires `max_tokens` above the thinking budget, whose minimum is 1024, so a 1-token
 * probe cannot think. With an effort, the probe thinks on the smallest budgets (distinct per
 * effort, so each effort stays its own cache family, as in a real host) and caps the output at the
 * budget plus one.
 */
const ANTHROPIC_PROBE_BUDGETS: Readonly<Record<string, number>> = Object.freeze({
  low: 1024,
  high: 1025,
  max: 1026,
})

/**
 * The connector of a `--probe-dialect`: chat completions in that dialect, or the adapter package
 * of another wire format, imported now.
 * @throws RunError naming the package to install when it is missing.
 */
export async function probeConnector(dialect: ProbeDialect): Promise<ProbeConnector> {
  if (!Object.hasOwn(OTHER_WIRES, dialect)) return chatCompletions(dialect as Dialect)
  const wire = OTHER_WIRES[dialect as OtherWire]
  // Each connection takes its own package's module.
  const module = await loadOptionalPackage<never>(wire.package, `--probe-dialect ${dialect}`, wire.what)
  return (options) => wire.connect(module, options)
}

/** What the Anthropic probe uses of `@warmfold/llm-anthropic`. */
interface AnthropicModule {
  readonly AnthropicLlmAdapter: typeof AnthropicLlmAdapter
  readonly parseAnthropicConfig: typeof parseAnthropicConfig
}

function anthropicConnection(module: AnthropicModule, options: ProbeConnectOptions): ProbeConnection {
  const config = module.parseAnthropicConfig({
    ...sharedConfig(options, { defaultMaxTokens: 1 }),
    thinkingBudgets: { ...ANTHROPIC_PROBE_BUDGETS },
  })
  const adapter = new module.AnthropicLlmAdapter(config, config.apiKey as string, { fetch: options.fetch })
  return {
    adapter: new ThinkingProbeAdapter(adapter, ANTHROPIC_PROBE_BUDGETS),
    url: `${options.baseURL.replace(/\/+$/, '')}/v1/messages`,
  }
}

/**
 * What every adapter package's probe config holds: without a key (a local server), a placeholder, since the SDKs refuse
 * to send without one; no retries; the probed model, with a context window no workload reaches and `entry`'s fields.
 */
function sharedConfig({ baseURL, apiKey, timeoutMs, model }: ProbeConnectOptions, entry: object = {}) {
  const models = { [model]: { contextWindow: 10_000_000, ...entry } }
  return { baseURL, apiKey: apiKey ?? 'no-key', timeoutMs, maxRetries: 0, models }
}

/** What the Responses probe uses of `@warmfold/llm-openai-responses`. */
interface ResponsesModule {
  readonly ResponsesLlmAdapter: typeof ResponsesLlmAdapter
  readonly parseResponsesConfig: typeof parseResponsesConfig
}

function responsesConnection(module: ResponsesModule, options: ProbeConnectOptions): ProbeConnection {
  const config = module.parseResponsesConfig(sharedConfig(options))
  return {
    adapter: new module.ResponsesLlmAdapter(config, config.apiKey as string, { fetch: options.fetch }),
    url: `${options.baseURL.replace(/\/+$/, '')}/responses`,
  }
}

/** What the Gemini probe uses of `@warmfold/llm-google`. */
interface GoogleModule {
  readonly GoogleLlmAdapter: typeof GoogleLlmAdapter
  readonly parseGoogleConfig: typeof parseGoogleConfig
  readonly thinkingTable: typeof thinkingTable
}

function geminiConnection(module: GoogleModule, options: ProbeConnectOptions): ProbeConnection {
  const { baseURL, model, fetch } = options
  // A known family (gemini-2.5-*, gemini-3-*) thinks as the adapter maps it by default.
  const known = module.thinkingTable(model, { contextWindow: 10_000_000 }) !== undefined
  const config = module.parseGoogleConfig(
    sharedConfig(options, known ? {} : { thinkingLevels: { ...GEMINI_PROBE_LEVELS } }),
  )
  const adapter = new module.GoogleLlmAdapter(config, config.apiKey as string, { fetch })
  return { adapter, url: `${baseURL.replace(/\/+$/, '')}/v1beta/models/${model}:streamGenerateContent` }
}

/** Raises a thinking request's output cap to its budget plus one; everything else passes through. */
class ThinkingProbeAdapter extends LlmAdapter {
  constructor(
    private readonly inner: LlmAdapter,
    private readonly budgets: Readonly<Record<string, number>>,
  ) {
    super()
  }

  resolveModel(provider: string, model: string): ModelInfo | Promise<ModelInfo> {
    return this.inner.resolveModel(provider, model)
  }

  stream(options: GenerateOptions): AsyncIterable<StreamChunk> {
    const budget = options.reasoningEffort === undefined ? undefined : this.budgets[options.reasoningEffort]
    return this.inner.stream(budget === undefined ? options : { ...options, maxTokens: budget + 1 })
  }
}
