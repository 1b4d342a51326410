import type { ContentBlock, Message } from '@warmfold/llm'
import { cleanText, collapseWhitespace } from './clean-text.ts'

/** Separates the pieces of a searchable text: no artifact holds it, so no match spans two pieces. */
const SEPARATOR = '\u0000'

/** What the model sees of one item after a fold: a message, or a text such as the checkpoint. */
export type VisibleItem = Message | string

/**
 * The string values of parsed tool-call arguments (so `"grep \"x\" src"` is searched as
 * `grep "x" src`), else the raw text.
 */
function argumentText(argumentsText: string): string {
  let parsed: unknown
  try {
    parsed = JSON.parse(argumentsText)
  } catch {
    return argumentsText
  }
  // Depth first, in document order, with a stack of its own: arguments may nest deeper than the call
  // stack goes. An object's key is pushed above its value, so it is read first, as a string is.
  const parts: string[] = []
  const stack: unknown[] = [parsed]
  while (stack.length > 0) {
    const value = stack.pop()
    if (typeof value === 'string') parts.push(value)
    else if (typeof value === 'number' || typeof value === 'boolean') parts.push(String(value))
    else if (Array.isArray(value)) for (let index = value.length - 1; index >= 0; index--) stack.push(value[index])
    else if (value !== null && typeof value === 'object') {
      const entries = Object.entries(value)
      for (let index = entries.length - 1; index >= 0; index--) stack.push(entries[index]![1], entries[index]![0])
    }
  }
  return parts.join('\n')
}

function blockText(block: ContentBlock, includeReasoning: boolean): string {
  switch (block.type) {
    case 'text':
      return block.text
    case 'reasoning':
      return includeReasoning ? block.text : ''
    case 'tool-call':
      return `${block.name}\n${argumentText(block.arguments)}`
    case 'tool-result':
      return block.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n')
    case 'image':
      return ''
  }
}

/** Options of {@link searchableText}. */
export interface SearchableTextOptions {
  /** Read reasoning blocks too (default `false`). */
  readonly includeReasoning?: boolean
  /** Lower-case the text (default `false`): what user messages are matched against. */
  readonly lowerCase?: boolean
}

/**
 * The searchable text of frozen messages already seen (a frozen message cannot change), with
 * reasoning and without, and its lower-cased form.
 */
const seen = { withReasoning: new WeakMap<Message, string>(), withoutReasoning: new WeakMap<Message, string>() }
const seenLower = { withReasoning: new WeakMap<Message, string>(), withoutReasoning: new WeakMap<Message, string>() }

function kept(cache: WeakMap<Message, string>, message: Message, make: () => string): string {
  const known = cache.get(message)
  if (known !== undefined) return known
  const text = make()
  if (Object.isFrozen(message)) cache.set(message, text)
  return text
}

function messageText(message: Message, includeReasoning: boolean, lowerCase: boolean): string {
  const variant = includeReasoning ? 'withReasoning' : 'withoutReasoning'
  if (lowerCase)
    return kept(seenLower[variant], message, () => messageText(message, includeReasoning, false).toLowerCase())
  return kept(seen[variant], message, () => {
    const pieces: string[] = []
    for (const block of message.content) {
      const text = blockText(block, includeReasoning)
      if (text !== '') pieces.push(collapseWhitespace(cleanText(text)))
    }
    return pieces.join(SEPARATOR)
  })
}

/**
 * One string holding what the model reads in `items`, normalized as artifacts are (ANSI codes
 * removed, white space collapsed), each item's pieces kept apart by a separator no artifact
 * contains. A frozen message's text is kept for the next call.
 */
export function searchableText(items: readonly VisibleItem[], options: SearchableTextOptions = {}): string {
  const includeReasoning = options.includeReasoning === true
  const lowerCase = options.lowerCase === true
  const pieces: string[] = []
  for (const [index, item] of items.entries()) {
    if (typeof item === 'string') {
      const text = collapseWhitespace(cleanText(item))
      pieces.push(lowerCase ? text.toLowerCase() : text)
    } else if (item !== null && typeof item === 'object' && Array.isArray(item.content)) {
      const text = messageText(item, includeReasoning, lowerCase)
      if (text !== '') pieces.push(text)
    } else
      throw new TypeError(
        `auditFold: visibleAfter[${index}] must be a Message or a string, got ${item === null ? 'null' : typeof item}`,
      )
  }
  return pieces.join(SEPARATOR)
}
