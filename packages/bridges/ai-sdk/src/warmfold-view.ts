import type { LanguageModelV3CallOptions, LanguageModelV3Message } from '@ai-sdk/provider'
import type { ContentBlock, GenerateOptions, JsonObject, Message, ToolDefinition } from '@warmfold/llm'
import { createMessage } from '@warmfold/llm'
import { messageText } from '@warmfold/cache-ledger/prefix'

/**
 * warmfold's view of one AI SDK message, so the engine's pure pieces (tool pairing, token
 * prices, the cache ledger's fingerprints) read it as they read the engine's own messages. Only
 * what those pieces look at is mapped: block kinds, tool-call ids and a block's text; a part's
 * provider options travel in the block's `signature`, so a changed option is a changed block.
 */
export function warmfoldMessage(message: LanguageModelV3Message): Message {
  let view = views.get(message)
  if (!view) {
    view = convert(message)
    views.set(message, view)
  }
  return view
}

const views = new WeakMap<LanguageModelV3Message, Message>()

function convert(message: LanguageModelV3Message): Message {
  if (message.role === 'system') return createMessage({ id: 'system', role: 'system', content: message.content })
  const content: ContentBlock[] = message.content.map((part): ContentBlock => {
    const signature = part.providerOptions === undefined ? {} : { signature: JSON.stringify(part.providerOptions) }
    switch (part.type) {
      case 'text':
        return { type: 'text', text: part.text, ...signature }
      case 'reasoning':
        return { type: 'reasoning', text: part.text, ...signature }
      case 'tool-call':
        return {
          type: 'tool-call',
          id: part.toolCallId,
          name: part.toolName,
          arguments: JSON.stringify(part.input ?? null),
          ...signature,
        }
      case 'tool-result':
        return {
          type: 'tool-result',
          toolCallId: part.toolCallId,
          content: [{ type: 'text', text: JSON.stringify(part.output) }],
        }
      default:
        // Files and tool-approval responses: priced and compared by their JSON.
        return { type: 'text', text: messageText({ role: 'user', content: [part] } as LanguageModelV3Message) }
    }
  })
  const role = message.role === 'tool' ? 'user' : message.role
  if (content.length === 0) content.push({ type: 'text', text: '' })
  return createMessage({
    id: 'message',
    role,
    content,
    source: role === 'assistant' ? { kind: 'model', provider: 'ai-sdk', model: 'ai-sdk' } : { kind: 'user' },
  })
}

/** warmfold's view of the call's tools, in order (provider tools by their id and arguments). */
export function warmfoldTools(tools: LanguageModelV3CallOptions['tools']): ToolDefinition[] {
  return (tools ?? []).map((tool) =>
    tool.type === 'function'
      ? {
          name: tool.name,
          description: tool.description ?? '',
          parameters: {
            schema: tool.inputSchema,
            providerOptions: tool.providerOptions ?? null,
          } as unknown as JsonObject,
        }
      : { name: tool.name, description: tool.id, parameters: { args: tool.args } as unknown as JsonObject },
  )
}

/**
 * The call as the cache ledger fingerprints a request: the envelope fields carry the provider,
 * the model id and every prompt-shaping setting the AI SDK sends (sampling, tool choice,
 * response format, provider options), so two calls with any of them different fall in two
 * cache families, as a provider renders them.
 */
export function warmfoldRequest(
  provider: string,
  modelId: string,
  params: LanguageModelV3CallOptions,
): GenerateOptions {
  const system = params.prompt
    .filter((message) => message.role === 'system')
    .map((message) => message.content as string)
  const envelope = JSON.stringify({
    temperature: params.temperature,
    topP: params.topP,
    topK: params.topK,
    presencePenalty: params.presencePenalty,
    frequencyPenalty: params.frequencyPenalty,
    seed: params.seed,
    toolChoice: params.toolChoice,
    responseFormat: params.responseFormat,
    providerOptions: params.providerOptions,
  })
  return {
    provider,
    model: modelId,
    reasoningEffort: envelope,
    ...(params.stopSequences ? { stop: params.stopSequences } : {}),
    ...(system.length > 0 ? { system: system.join('\n') } : {}),
    tools: warmfoldTools(params.tools),
    messages: params.prompt.filter((message) => message.role !== 'system').map(warmfoldMessage),
  }
}
