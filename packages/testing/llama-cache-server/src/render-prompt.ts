/** A tool call of an assistant message, as on the OpenAI wire. `arguments` is rendered verbatim. */
export interface PromptToolCall {
  readonly id: string
  readonly type?: 'function'
  readonly function: { readonly name: string; readonly arguments: string }
}

/**
 * A message as the template sees it: the OpenAI wire message with `content` already flattened to
 * a string (text parts joined with `\n`) or `null`.
 */
export interface PromptMessage {
  readonly role: 'system' | 'developer' | 'user' | 'assistant' | 'tool'
  readonly content: string | null
  /** Assistant reasoning, rendered as `<think>…</think>` before the content. */
  readonly reasoning_content?: string
  readonly tool_calls?: readonly PromptToolCall[]
  /** Required for `tool` messages: the id of the call this result answers. */
  readonly tool_call_id?: string
}

/** The template variables. Field names are the jinja names, so one object feeds both renderers. */
export interface PromptInput {
  readonly messages: readonly PromptMessage[]
  /** Tool definitions, each rendered as given with jinja `tojson` (key order kept). */
  readonly tools?: readonly unknown[]
  /** Rendered as the very first line, `Reasoning effort: <value>`, when non-empty. */
  readonly reasoning_effort?: string
  /** Appends `<|assistant|>`, the header the model answers after. */
  readonly add_generation_prompt?: boolean
}

/**
 * JSON the way jinja's `tojson` filter writes it in `@huggingface/jinja` (and Python's
 * `json.dumps` defaults): `", "` between items, `": "` after keys, keys in insertion order,
 * non-ASCII kept as is.
 */
export function jinjaToJson(value: unknown): string {
  if (value === null || value === undefined) return 'null'
  if (Array.isArray(value)) return `[${value.map((item) => jinjaToJson(item)).join(', ')}]`
  if (typeof value === 'object') {
    return `{${Object.entries(value)
      .map(([key, item]) => `${JSON.stringify(key)}: ${jinjaToJson(item)}`)
      .join(', ')}}`
  }
  return JSON.stringify(value)
}

/**
 * Renders a chat request into prompt text, byte-identical to {@link TINY_CHAT_TEMPLATE} rendered
 * by a jinja engine with the same variables: the effort line, a leading system message, the
 * tools, the other messages in order, then the generation prompt. Truthiness follows jinja: an empty string, `null`
 * or an empty array renders nothing.
 */
export function renderPrompt(input: PromptInput): string {
  let text = ''
  if (input.reasoning_effort) text += `Reasoning effort: ${input.reasoning_effort}\n`
  const first = input.messages[0]
  const leadingSystem = first !== undefined && (first.role === 'system' || first.role === 'developer')
  if (leadingSystem) text += `<|system|>${first.content ?? ''}<|end|>\n`
  if (input.tools && input.tools.length > 0) {
    text += '<|tools|>'
    for (const tool of input.tools) text += `${jinjaToJson(tool)}\n`
    text += '<|end|>\n'
  }
  for (const message of leadingSystem ? input.messages.slice(1) : input.messages) {
    switch (message.role) {
      case 'system':
      case 'developer':
        text += `<|system|>${message.content ?? ''}<|end|>\n`
        break
      case 'user':
        text += `<|user|>${message.content ?? ''}<|end|>\n`
        break
      case 'assistant':
        text += '<|assistant|>'
        if (message.reasoning_content) text += `<think>${message.reasoning_content}</think>`
        if (message.content) text += message.content
        for (const call of message.tool_calls ?? []) {
          text += `<tool_call>${call.id} ${call.function.name} ${call.function.arguments}</tool_call>`
        }
        text += '<|end|>\n'
        break
      case 'tool':
        text += `<|tool|>${message.tool_call_id ?? ''}\n${message.content ?? ''}<|end|>\n`
        break
    }
  }
  if (input.add_generation_prompt) text += '<|assistant|>'
  return text
}
