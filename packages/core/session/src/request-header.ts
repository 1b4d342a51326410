import type { CallConfig, ToolDefinition } from '@warmfold/llm'
import { canonicalJson, deepFreeze, pickCallConfig } from '@warmfold/llm'

/**
 * Everything that frames a conversation request besides its messages: the call config, the
 * system prompt and the tools, in order. The agent loop logs it as `request/header` whenever it
 * changes, so every request can be rebuilt from the log and every envelope change is visible.
 */
export interface RequestHeader {
  readonly config: CallConfig
  readonly system?: string
  readonly tools?: readonly ToolDefinition[]
}

/** Why a `request/header` event was appended. */
export type RequestHeaderReason = 'initial' | 'resume' | 'change'

/**
 * The canonical, frozen form of a header: only the call-config fields, undefined members
 * dropped, an empty system prompt or tool list removed (they send the same bytes as none).
 */
export function canonicalHeader(header: RequestHeader): RequestHeader {
  const canonical: { config: CallConfig; system?: string; tools?: readonly ToolDefinition[] } = {
    config: pickCallConfig(header.config),
  }
  if (header.system) canonical.system = header.system
  if (header.tools && header.tools.length > 0) canonical.tools = header.tools
  return deepFreeze(JSON.parse(canonicalJson(canonical)) as RequestHeader)
}

/** Whether two headers produce the same request envelope. */
export function headerEquals(left: RequestHeader, right: RequestHeader): boolean {
  return canonicalJson(canonicalHeader(left)) === canonicalJson(canonicalHeader(right))
}
