import type { RequestApi } from '@warmfold/cache-ledger/prefix'

/** What the answer reader has gathered so far, filled event by event (or from one JSON body). */
export interface AnswerState {
  /** Usage fields as last reported (an API may repeat or complete them in a later event). */
  input?: number
  cacheRead?: number
  cacheWrite?: number
  output?: number
  /** Text output seen (reasoning does not count: a tool call may still follow it). */
  text: boolean
  reasoning: boolean
  toolCall: boolean
  responseId?: string
  providerDiagnosis?: string
}

type Json = Record<string, unknown>

function record(value: unknown): Json | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : undefined
}

function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined
}

function list(value: unknown): readonly unknown[] {
  return Array.isArray(value) ? value : []
}

function diagnosis(state: AnswerState, value: unknown): void {
  if (value !== undefined && value !== null) state.providerDiagnosis = JSON.stringify(value)
}

function id(state: AnswerState, value: unknown): void {
  if (typeof value === 'string' && value !== '' && state.responseId === undefined) state.responseId = value
}

/**
 * Reads one event of an answer (a parsed SSE `data:` object, a whole JSON body, or one element
 * of Gemini's streamed JSON array) of `api` into `state`.
 */
export function readAnswerEvent(api: RequestApi, state: AnswerState, event: Json): void {
  READERS[api](state, event)
}

const READERS: Readonly<Record<RequestApi, (state: AnswerState, event: Json) => void>> = {
  'anthropic-messages': readAnthropic,
  'openai-chat': readChat,
  'openai-responses': readResponses,
  gemini: readGemini,
}

function anthropicUsage(state: AnswerState, usage: Json | undefined): void {
  if (!usage) return
  state.input = count(usage.input_tokens) ?? state.input
  state.cacheRead = count(usage.cache_read_input_tokens) ?? state.cacheRead
  state.cacheWrite = count(usage.cache_creation_input_tokens) ?? state.cacheWrite
  state.output = count(usage.output_tokens) ?? state.output
}

function anthropicBlock(state: AnswerState, block: Json | undefined): void {
  if (!block) return
  if (block.type === 'tool_use' || block.type === 'server_tool_use') state.toolCall = true
  else if (block.type === 'text' && typeof block.text === 'string' && block.text !== '') state.text = true
  else if (block.type === 'thinking' || block.type === 'redacted_thinking') state.reasoning = true
}

function readAnthropic(state: AnswerState, event: Json): void {
  switch (event.type) {
    case 'message': // a whole (non-streamed) answer
      id(state, event.id)
      anthropicUsage(state, record(event.usage))
      diagnosis(state, event.diagnostics)
      for (const block of list(event.content)) anthropicBlock(state, record(block))
      return
    case 'message_start': {
      const message = record(event.message)
      id(state, message?.id)
      anthropicUsage(state, record(message?.usage))
      diagnosis(state, message?.diagnostics)
      return
    }
    case 'content_block_start':
      return anthropicBlock(state, record(event.content_block))
    case 'content_block_delta': {
      const delta = record(event.delta)
      if (delta?.type === 'text_delta' && typeof delta.text === 'string' && delta.text !== '') state.text = true
      else if (delta?.type === 'thinking_delta') state.reasoning = true
      return
    }
    case 'message_delta':
      anthropicUsage(state, record(event.usage))
      diagnosis(state, event.diagnostics)
      return
  }
}

/** OpenAI usage: Chat's `prompt_tokens` and `completion_tokens`, Responses' `input_…` and `output_…`. */
function openAiUsage(state: AnswerState, usage: Json | undefined, input: string, output: string): void {
  if (!usage) return
  state.input = count(usage[`${input}_tokens`]) ?? state.input
  state.cacheRead = count(record(usage[`${input}_tokens_details`])?.cached_tokens) ?? state.cacheRead
  state.output = count(usage[`${output}_tokens`]) ?? state.output
}

function readChat(state: AnswerState, event: Json): void {
  id(state, event.id)
  openAiUsage(state, record(event.usage), 'prompt', 'completion')
  for (const choice of list(event.choices)) {
    const part = record(record(choice)?.delta) ?? record(record(choice)?.message)
    if (!part) continue
    if (list(part.tool_calls).length > 0 || record(part.function_call)) state.toolCall = true
    if (typeof part.content === 'string' && part.content !== '') state.text = true
    if (typeof part.reasoning_content === 'string' && part.reasoning_content !== '') state.reasoning = true
  }
}

const RESPONSES_TOOL_CALLS = new Set([
  'function_call',
  'custom_tool_call',
  'local_shell_call',
  'shell_call',
  'apply_patch_call',
  'computer_call',
])

function responsesItem(state: AnswerState, item: Json | undefined): void {
  if (!item || typeof item.type !== 'string') return
  if (RESPONSES_TOOL_CALLS.has(item.type)) state.toolCall = true
  else if (item.type === 'reasoning') state.reasoning = true
  else if (item.type === 'message')
    for (const part of list(item.content)) {
      const text = record(part)?.text
      if (typeof text === 'string' && text !== '') state.text = true
    }
}

function responsesBody(state: AnswerState, response: Json | undefined): void {
  if (!response) return
  id(state, response.id)
  const usage = record(response.usage)
  openAiUsage(state, usage, 'input', 'output')
  diagnosis(state, response.prompt_cache_diagnostics ?? usage?.prompt_cache_diagnostics)
  for (const item of list(response.output)) responsesItem(state, record(item))
}

function readResponses(state: AnswerState, event: Json): void {
  const type = typeof event.type === 'string' ? event.type : ''
  if (event.object === 'response') return responsesBody(state, event)
  if (type === 'response.output_text.delta') {
    if (typeof event.delta === 'string' && event.delta !== '') state.text = true
  } else if (type === 'response.output_item.added' || type === 'response.output_item.done') {
    responsesItem(state, record(event.item))
  } else if (type === 'response.created' || type === 'response.in_progress') {
    id(state, record(event.response)?.id)
  } else if (type === 'response.completed' || type === 'response.incomplete' || type === 'response.failed') {
    responsesBody(state, record(event.response))
  }
}

function readGemini(state: AnswerState, event: Json): void {
  id(state, event.responseId)
  const usage = record(event.usageMetadata)
  if (usage) {
    state.input = count(usage.promptTokenCount) ?? state.input
    state.cacheRead = count(usage.cachedContentTokenCount) ?? state.cacheRead
    const candidates = count(usage.candidatesTokenCount)
    const thoughts = count(usage.thoughtsTokenCount)
    if (candidates !== undefined || thoughts !== undefined) state.output = (candidates ?? 0) + (thoughts ?? 0)
  }
  for (const candidate of list(event.candidates))
    for (const part of list(record(record(candidate)?.content)?.parts)) {
      const fields = record(part)
      if (!fields) continue
      if (record(fields.functionCall)) state.toolCall = true
      else if (typeof fields.text === 'string' && fields.text !== '') {
        if (fields.thought === true) state.reasoning = true
        else state.text = true
      }
    }
}
