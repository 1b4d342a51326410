export type { CallConfig } from './call-config.ts'
export { callConfigEquals, pickCallConfig } from './call-config.ts'
export { canonicalJson } from './canonical-json.ts'
export type { NumberRange } from './config-number.ts'
export {
  integerRange,
  integerSchema,
  MAX_CONFIG_INTEGER,
  MAX_TIMER_MS,
  millisecondsRange,
  millisecondsSchema,
  numberProblem,
  shareSchema,
  showValue,
} from './config-number.ts'
export type { GenerateResult } from './content-assembler.ts'
export { ContentAssembler } from './content-assembler.ts'
export type {
  ContentBlock,
  ContentBlockType,
  ImageBlock,
  ReasoningBlock,
  TextBlock,
  ToolCallBlock,
  ToolResultBlock,
  ToolResultContent,
} from './content-block.ts'
export { imageBlock, reasoningBlock, textBlock, textOf, toolCallBlock, toolResultBlock } from './content-block.ts'
export { deepFreeze } from './deep-freeze.ts'
export type { GenerateOptions, RequestPurpose, ToolDefinition } from './generate-options.ts'
export type { JsonObject, JsonValue } from './json-value.ts'
export { LlmAdapter } from './llm-adapter.ts'
export type { LlmErrorCode, LlmErrorOptions } from './llm-error.ts'
export { LlmError } from './llm-error.ts'
export type { LlmFinish } from './llm-runtime.ts'
export { LlmRuntime } from './llm-runtime.ts'
export type { Message, MessageInit, MessageRole, MessageSource, ToolResultMessage } from './message.ts'
export {
  createAssistantMessage,
  createMessage,
  createToolResultMessage,
  createUserMessage,
  isToolResultMessage,
  promptView,
} from './message.ts'
export type { CachePrices, ModelInfo } from './model-info.ts'
export type { Parsed } from './plugin-config.ts'
export type { PluginFailure, WarmfoldPluginInfo } from './plugin-failures.ts'
export { assertPluginsLoaded, pluginFailures, PluginLoadError, WARMFOLD_PLUGIN } from './plugin-failures.ts'
export { PROMPT_CACHE_KEY_MAX_LENGTH, promptCacheKeyFor } from './prompt-cache-key.ts'
export type { FinishReason, StreamChunk } from './stream-chunk.ts'
export type { ConfigInput, ConfigParser } from './strict-config.ts'
export { strictConfig, unknownKeyMessage } from './strict-config.ts'
export type { TokenUsage } from './token-usage.ts'
export { promptTokensOf } from './token-usage.ts'
export { LlmRuntime as default } from './llm-runtime.ts'
