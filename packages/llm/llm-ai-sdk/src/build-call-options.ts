import type {
  LanguageModelV3CallOptions,
  LanguageModelV3FunctionTool,
  LanguageModelV3Prompt,
  SharedV3ProviderOptions,
} from '@ai-sdk/provider'
import type { GenerateOptions, ToolDefinition } from '@warmfold/llm'
import { canonicalJson, promptCacheKeyFor } from '@warmfold/llm'
import { checkOutputReserve, unsupportedEffort } from '@warmfold/llm/adapter'
import type { AiSdkCacheKind, AiSdkModelConfig } from './config.ts'
import { cacheKindOf, EFFORT_OFF } from './config.ts'
import { convertPrompt } from './convert-prompt.ts'

/** The call options of one request, without `abortSignal` (added per attempt). */
export type AiSdkCallOptions = Omit<LanguageModelV3CallOptions, 'abortSignal'>

/** The `cacheControl` value of every Anthropic breakpoint (`ephemeral`, the default 5-minute TTL). */
export const ANTHROPIC_CACHE_CONTROL = Object.freeze({ type: 'ephemeral' as const })

/** The `budgetTokens` `@ai-sdk/anthropic` sends when `thinking: { type: 'enabled' }` names none. */
export const ANTHROPIC_DEFAULT_THINKING_BUDGET = 1024

/**
 * Maps warmfold's options to V3 call options: the prompt (`convertPrompt`), function tools in the
 * given order with `inputSchema` in canonical key order, `maxOutputTokens` (`maxTokens`, else the
 * model's `defaultMaxTokens`), `temperature`, `stopSequences`, and `providerOptions` (the model's
 * own, the effort's merged over them, then the cache controls of {@link cacheKindOf}). Pure:
 * the same options give equal call options, so the provider sends the same bytes.
 *
 * `maxTokens` is the whole output cap, thinking included, as in every warmfold adapter. For an
 * Anthropic model with extended thinking on, `@ai-sdk/anthropic` sends `max_tokens` =
 * `maxOutputTokens` + `budgetTokens`, so `maxOutputTokens` is `maxTokens` − `budgetTokens`: the
 * wire `max_tokens` is `maxTokens`, as the direct Anthropic adapter sends it.
 *
 * @throws LlmError `UNSUPPORTED_REASONING_EFFORT` for an effort without `effortOptions`,
 *   `INVALID_REQUEST` for a prompt the V3 spec cannot carry, and `INVALID_REQUEST` for a cap at
 *   or below the thinking budget (no room left for the answer; Anthropic rejects it).
 */
export function buildCallOptions(options: GenerateOptions, model: AiSdkModelConfig): AiSdkCallOptions {
  const kind = cacheKindOf(model)
  const tools = options.tools?.length ? options.tools.map(functionTool) : undefined
  const prompt = convertPrompt(options.system, options.messages, options.provider)
  if (kind === 'anthropic') placeBreakpoints(prompt, tools, options.purpose === 'compaction')
  let providerOptions = mergeOptions(model.providerOptions, effortOptions(options, model))
  const maxTokens = options.maxTokens ?? model.defaultMaxTokens
  const reserve = thinkingReserve(model, providerOptions)
  const effort = options.reasoningEffort === undefined ? '' : ` of effort "${options.reasoningEffort}"`
  checkOutputReserve({ ...options, maxTokens }, reserve, `providerOptions.anthropic.thinking.budgetTokens${effort}`)
  const maxOutputTokens = maxTokens === undefined ? undefined : maxTokens - reserve
  const cacheKey =
    kind === 'openai' || kind === 'openai-compatible'
      ? promptCacheKey(options.cacheSessionId ?? options.sessionId, model)
      : undefined
  if (cacheKey !== undefined) providerOptions = mergeOptions(providerOptions, cacheKeyOptions(kind, cacheKey, model))
  return {
    prompt,
    ...(maxOutputTokens === undefined ? {} : { maxOutputTokens }),
    ...(options.temperature === undefined ? {} : { temperature: options.temperature }),
    ...(options.stop === undefined ? {} : { stopSequences: [...options.stop] }),
    ...(tools ? { tools } : {}),
    ...(providerOptions ? { providerOptions } : {}),
  }
}

/**
 * The prompt cache key of a session (`promptCacheKeyFor` of `@warmfold/llm`, the same key the
 * direct OpenAI adapters send), or `undefined` without a session id or with `promptCacheKey: false`.
 */
export function promptCacheKey(
  sessionId: string | undefined,
  model: Pick<AiSdkModelConfig, 'promptCacheKey'>,
): string | undefined {
  if (sessionId === undefined || sessionId === '' || model.promptCacheKey === false) return undefined
  return promptCacheKeyFor(sessionId)
}

function cacheKeyOptions(kind: AiSdkCacheKind, key: string, model: AiSdkModelConfig): SharedV3ProviderOptions {
  // @ai-sdk/openai reads providerOptions.openai.promptCacheKey; @ai-sdk/openai-compatible copies
  // unknown keys of providerOptions[<provider name>] into the body as they are.
  if (kind === 'openai') return { openai: { promptCacheKey: key } }
  return { [model.model.provider.split('.')[0]!.trim()]: { prompt_cache_key: key } }
}

/**
 * Places Anthropic breakpoints through `providerOptions.anthropic.cacheControl`, like the direct
 * Anthropic adapter: (1) the end of the static head, the system message, or without one the last
 * tool; (2) the last part that can carry one (not reasoning) of the last message, or, for a
 * summary call, of the message before the instruction, so the replayed region is read and no
 * entry is written for the one-off instruction.
 */
function placeBreakpoints(
  prompt: LanguageModelV3Prompt,
  tools: LanguageModelV3FunctionTool[] | undefined,
  summary: boolean,
): void {
  const marker = { anthropic: { cacheControl: ANTHROPIC_CACHE_CONTROL } }
  const head = prompt[0]
  if (head?.role === 'system') head.providerOptions = mergeOptions(head.providerOptions, marker)
  else if (tools?.length)
    tools[tools.length - 1] = { ...tools.at(-1)!, providerOptions: mergeOptions(tools.at(-1)!.providerOptions, marker) }
  const conversation = head?.role === 'system' ? prompt.slice(1) : prompt
  const target = summary && conversation.length > 1 ? conversation.at(-2) : conversation.at(-1)
  if (!target) return
  const parts = target.content as Array<{ type: string; providerOptions?: SharedV3ProviderOptions }>
  const index = parts.findLastIndex((part) => part.type !== 'reasoning' && part.type !== 'tool-approval-response')
  if (index >= 0)
    parts[index] = { ...parts[index]!, providerOptions: mergeOptions(parts[index]!.providerOptions, marker) }
}

/**
 * The output tokens the call options reserve for thinking: for an Anthropic model (`@ai-sdk/anthropic`,
 * `model.provider` `anthropic.*`) whose `providerOptions.anthropic.thinking` is
 * `{ type: 'enabled' }`, its `budgetTokens` (the provider's {@link ANTHROPIC_DEFAULT_THINKING_BUDGET}
 * without one); 0 otherwise (thinking off or `adaptive`, which has no fixed budget, or another provider).
 */
export function thinkingReserve(
  model: Pick<AiSdkModelConfig, 'model'>,
  providerOptions: SharedV3ProviderOptions | undefined,
): number {
  if (!model.model.provider.startsWith('anthropic.')) return 0
  const thinking = (providerOptions?.anthropic as { thinking?: { type?: unknown; budgetTokens?: unknown } } | undefined)
    ?.thinking
  if (thinking?.type !== 'enabled') return 0
  return typeof thinking.budgetTokens === 'number' ? thinking.budgetTokens : ANTHROPIC_DEFAULT_THINKING_BUDGET
}

/**
 * The output tokens `effort` reserves for thinking on `model` (see {@link thinkingReserve});
 * 0 for an effort without `effortOptions`.
 */
export function effortReserve(model: AiSdkModelConfig, effort: string): number {
  const own =
    effort === EFFORT_OFF || !model.effortOptions || !Object.hasOwn(model.effortOptions, effort)
      ? undefined
      : model.effortOptions[effort]
  return thinkingReserve(model, mergeOptions(model.providerOptions, own))
}

function effortOptions(options: GenerateOptions, model: AiSdkModelConfig): SharedV3ProviderOptions | undefined {
  const effort = options.reasoningEffort
  if (effort === undefined || effort === EFFORT_OFF) return undefined
  if (!model.effortOptions || !Object.hasOwn(model.effortOptions, effort)) {
    const known = [EFFORT_OFF, ...Object.keys(model.effortOptions ?? {})].join(', ')
    throw unsupportedEffort(options, effort, 'effortOptions', known)
  }
  return model.effortOptions[effort]
}

function functionTool(tool: ToolDefinition): LanguageModelV3FunctionTool {
  // Canonical key order, so a schema assembled in another key order renders the same bytes.
  return {
    type: 'function',
    name: tool.name,
    description: tool.description,
    inputSchema: JSON.parse(canonicalJson(tool.parameters)),
  }
}

/** Merges providerOptions per provider name (the right side's keys win); `undefined` when both are. */
export function mergeOptions(
  left: SharedV3ProviderOptions | undefined,
  right: SharedV3ProviderOptions | undefined,
): SharedV3ProviderOptions | undefined {
  if (!left) return right
  if (!right) return left
  const merged: Record<string, Record<string, unknown>> = { ...left }
  for (const [name, values] of Object.entries(right)) merged[name] = { ...merged[name], ...values }
  return merged as SharedV3ProviderOptions
}
