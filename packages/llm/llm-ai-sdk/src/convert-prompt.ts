import type {
  LanguageModelV3Message,
  LanguageModelV3Prompt,
  LanguageModelV3ToolResultOutput,
  LanguageModelV3ToolResultPart,
  SharedV3ProviderOptions,
} from '@ai-sdk/provider'
import type { ContentBlock, Message, ToolResultBlock } from '@warmfold/llm'
import { misplacedBlock, unsendable } from '@warmfold/llm/adapter'
import { decodeSignature } from './signature.ts'

type AssistantPart = Extract<LanguageModelV3Message, { role: 'assistant' }>['content'][number]
type UserPart = Extract<LanguageModelV3Message, { role: 'user' }>['content'][number]

/**
 * Turns the system prompt and the conversation into a V3 prompt:
 *
 * - `system` → one leading `system` message;
 * - a user message → a `user` message of text and file (image) parts; its tool-result blocks
 *   become `tool` messages, in order (a user message that mixes both is split where they change);
 * - an assistant message → an `assistant` message with reasoning, text and tool-call parts in the
 *   block order; each block's `signature` (JSON of the provider metadata it streamed with) becomes
 *   the part's `providerOptions`, so Anthropic thinking signatures, OpenAI item ids and Gemini
 *   thought signatures are replayed. A reasoning block without a signature is replayed as plain
 *   reasoning (providers that need one drop it themselves);
 * - a tool call's `input` is the model's raw argument string: both the OpenAI-compatible and the
 *   Anthropic provider parse (or pass through) a string, so the bytes the model wrote are what the
 *   provider sees.
 *
 * Tool results carry the tool's name (the V3 spec requires it), found from the call with the same
 * id earlier in the conversation.
 *
 * @throws LlmError `INVALID_REQUEST` for a `system`-role message, a tool result whose call is not in
 *   the conversation, or a block in a role that cannot carry it.
 */
export function convertPrompt(
  system: string | undefined,
  messages: readonly Message[],
  provider: string,
): LanguageModelV3Prompt {
  const prompt: LanguageModelV3Prompt = system ? [{ role: 'system', content: system }] : []
  const toolNames = new Map<string, string>()
  messages.forEach((message, position) => {
    if (message.role === 'system')
      throw unsendable(
        provider,
        `messages[${position}] has role "system"; pass the system prompt as GenerateOptions.system`,
      )
    if (message.role === 'assistant') {
      const content = assistantParts(message.content, position, provider)
      for (const part of content) if (part.type === 'tool-call') toolNames.set(part.toolCallId, part.toolName)
      if (content.length) prompt.push({ role: 'assistant', content })
      return
    }
    for (const group of userGroups(message.content)) {
      if (group.kind === 'tool') {
        prompt.push({
          role: 'tool',
          content: group.blocks.map((block) => toolResultPart(block, toolNames, position, provider)),
        })
      } else {
        const content = group.blocks.flatMap((block) => userPart(block, position, provider))
        if (content.length) prompt.push({ role: 'user', content })
      }
    }
  })
  return prompt
}

function assistantParts(blocks: readonly ContentBlock[], position: number, provider: string): AssistantPart[] {
  const parts: AssistantPart[] = []
  for (const block of blocks) {
    switch (block.type) {
      case 'reasoning':
        parts.push({ type: 'reasoning', text: block.text, ...options(block.signature, position, provider) })
        break
      case 'text':
        if (block.text !== '' || block.signature)
          parts.push({ type: 'text', text: block.text, ...options(block.signature, position, provider) })
        break
      case 'tool-call':
        parts.push({
          type: 'tool-call',
          toolCallId: block.id,
          toolName: block.name,
          input: block.arguments,
          ...options(block.signature, position, provider),
        })
        break
      default:
        throw misplacedBlock(provider, position, 'assistant', block.type)
    }
  }
  return parts
}

function options(
  signature: string | undefined,
  position: number,
  provider: string,
): { providerOptions?: SharedV3ProviderOptions } {
  const decoded = decodeSignature(signature, `messages[${position}]`, provider)
  return decoded ? { providerOptions: decoded } : {}
}

interface Group {
  readonly kind: 'user' | 'tool'
  readonly blocks: ContentBlock[]
}

function userGroups(blocks: readonly ContentBlock[]): Group[] {
  const groups: Group[] = []
  for (const block of blocks) {
    const kind = block.type === 'tool-result' ? 'tool' : 'user'
    const last = groups.at(-1)
    if (last?.kind === kind) last.blocks.push(block)
    else groups.push({ kind, blocks: [block] })
  }
  return groups
}

function userPart(block: ContentBlock, position: number, provider: string): UserPart[] {
  switch (block.type) {
    case 'text':
      return block.text === '' ? [] : [{ type: 'text', text: block.text }]
    case 'image':
      return [{ type: 'file', mediaType: block.mediaType, data: block.data }]
    default:
      throw misplacedBlock(provider, position, 'user', block.type)
  }
}

function toolResultPart(
  block: ContentBlock,
  toolNames: ReadonlyMap<string, string>,
  position: number,
  provider: string,
): LanguageModelV3ToolResultPart {
  const result = block as ToolResultBlock
  const toolName = toolNames.get(result.toolCallId)
  if (toolName === undefined) {
    throw unsendable(
      provider,
      `messages[${position}] answers tool call "${result.toolCallId}", which no earlier assistant message made; ` +
        `the AI SDK needs the tool's name`,
    )
  }
  return { type: 'tool-result', toolCallId: result.toolCallId, toolName, output: toolOutput(result) }
}

/**
 * Text-only results are `text` (or `error-text`) outputs: one string, joined without separator.
 * Results with images are `content` outputs; the V3 spec has no error flag for those, so an
 * erroneous result with images is sent without one.
 */
function toolOutput(result: ToolResultBlock): LanguageModelV3ToolResultOutput {
  if (result.content.every((part) => part.type === 'text')) {
    const value = result.content.map((part) => (part.type === 'text' ? part.text : '')).join('')
    return { type: result.isError ? 'error-text' : 'text', value }
  }
  return {
    type: 'content',
    value: result.content.map((part) =>
      part.type === 'text'
        ? { type: 'text' as const, text: part.text }
        : { type: 'image-data' as const, data: part.data, mediaType: part.mediaType },
    ),
  }
}
