import type { ContentBlock, GenerateOptions, Message, ToolDefinition } from '@warmfold/llm'
import {
  canonicalJson,
  createAssistantMessage,
  createToolResultMessage,
  createUserMessage,
  textBlock,
  toolCallBlock,
} from '@warmfold/llm'

/** The route every hand-built request uses unless a test overrides it. */
export const ROUTE = { provider: 'sim', model: 'coder' } as const

/** A hand-built request on {@link ROUTE}. */
export function request(messages: readonly Message[], extra: Partial<GenerateOptions> = {}): GenerateOptions {
  return { ...ROUTE, messages, ...extra }
}

/**
 * The prompt as the package documents it, written out independently of `PromptRenderer`:
 * each tool as `{"tool":…}`, the system prompt as `{"system":…}`, the first block of each
 * message as `{"block":…,"role":…}` and every further block as `{"block":…}`, all through
 * `canonicalJson`, concatenated in that order.
 */
export function promptText(options: GenerateOptions): string {
  return promptBlocks(options).join('')
}

/** The prompt's content blocks (tools, system, message blocks) as written out by {@link promptText}. */
export function promptBlocks(options: GenerateOptions): string[] {
  const blocks: string[] = []
  for (const tool of options.tools ?? []) blocks.push(canonicalJson({ tool }))
  if (options.system) blocks.push(canonicalJson({ system: options.system }))
  for (const message of options.messages) {
    message.content.forEach((block: ContentBlock, index) => {
      blocks.push(index === 0 ? canonicalJson({ role: message.role, block }) : canonicalJson({ block }))
    })
  }
  return blocks
}

/** Length of the common prefix of two strings. */
export function commonPrefix(left: string, right: string): number {
  let index = 0
  while (index < left.length && index < right.length && left[index] === right[index]) index++
  return index
}

/** `length` letters of text that depend on `seed` (no JSON escapes, so one character each). */
export function letters(seed: number, length: number): string {
  let text = ''
  let state = seed * 7919 + 17
  while (text.length < length) {
    state = (state * 1103515245 + 12345) % 2147483648
    text += String.fromCharCode(97 + (state % 26))
  }
  return text
}

/** Characters `{"block":{"text":"` that come before a user or assistant text inside its first segment. */
export const FIRST_TEXT_OFFSET = '{"block":{"text":"'.length

/** A user message whose first segment is exactly `chars` characters long. */
export function userMessageOfChars(chars: number, seed = 1): Message {
  const overhead = canonicalJson({ role: 'user', block: { type: 'text', text: '' } }).length
  if (chars < overhead) throw new RangeError(`a user message needs at least ${overhead} characters`)
  return createUserMessage(letters(seed, chars - overhead))
}

/** One tool step: an assistant message (text + tool call, two blocks) and its result (one block). */
export function toolStep(index: number, resultChars = 40): Message[] {
  return [
    createAssistantMessage(
      [textBlock(`step ${index}`), toolCallBlock(`call-${index}`, 'read_file', `{"path":"src/f${index}.ts"}`)],
      ROUTE,
    ),
    createToolResultMessage(`call-${index}`, letters(1000 + index, resultChars)),
  ]
}

/** Three tool definitions. */
export const TOOLS: readonly ToolDefinition[] = [
  {
    name: 'read_file',
    description: 'Read a file.',
    parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  },
  { name: 'run_tests', description: 'Run the tests.', parameters: { type: 'object', properties: {} } },
  {
    name: 'search',
    description: 'Search the repository.',
    parameters: { type: 'object', properties: { query: { type: 'string' } } },
  },
]
