import type { ContentBlock, Message, ToolResultBlock } from '@warmfold/llm'
import type { Artifact, ArtifactClass, ArtifactOrigin } from './artifact.ts'
import type { ExtractArtifactsOptions, ToolCallRecord, ToolCallResult } from './artifact-extraction.ts'
import { ArtifactCollector } from './artifact-collector.ts'
import { normalizeErrorText } from './error-headlines.ts'
import type { ArtifactSink, LineCache } from './line-tokens.ts'
import type { TextSource } from './scan-text.ts'
import { scanText } from './scan-text.ts'
import { scanBudget } from './scanned-lines.ts'
import { readToolCallArguments } from './tool-call-arguments.ts'
import type { ToolKind } from './tool-kind.ts'
import { changesNamedFiles, resolveToolKind } from './tool-kind.ts'

/** A tool call as one message holds it (its seq is the message's). */
export interface MessageToolCall extends Omit<ToolCallRecord, 'seq' | 'kind' | 'result'> {
  readonly kind: 'call'
  readonly toolKind: ToolKind
}

/** A tool result as one message holds it, to be matched with its call by id. */
export interface MessageToolResult extends Omit<ToolCallResult, 'seq'> {
  readonly kind: 'result'
  readonly toolCallId: string
}

/**
 * Everything one message contributes to an extraction, without its seq: the mentions in order
 * of appearance, its tool calls and results in block order, and its characters. A message's
 * reading never depends on the messages around it, which is what lets a region be merged from
 * messages read earlier.
 */
export interface MessageArtifacts {
  /**
   * Each (class, text) the message names, once, in order of first mention, with its origin and
   * how often the message names it (`seq` and `firstSeq` are 0: the message's seq is the region's).
   */
  readonly mentions: readonly Artifact[]
  /** The `artifactKey` of each mention, in the same order. */
  readonly mentionKeys: readonly string[]
  readonly toolSteps: readonly (MessageToolCall | MessageToolResult)[]
  readonly characters: number
}

/** Nothing: a system message or a plugin's (an earlier checkpoint), which extraction does not read. */
export const NOTHING_READ: MessageArtifacts = Object.freeze({
  mentions: Object.freeze([]),
  mentionKeys: Object.freeze([]),
  toolSteps: Object.freeze([]),
  characters: 0,
})

function resultText(block: ToolResultBlock): string {
  let text = ''
  for (const part of block.content) if (part.type === 'text') text += (text === '' ? '' : '\n') + part.text
  return text
}

/**
 * Reads one message's artifacts: tool-call arguments (paths from path-like keys, commands from
 * shell tools), tool results, text. System messages and messages a plugin wrote are not read.
 * With `lineCache`, lines scanned before (in this message or earlier ones) are replayed. Its
 * blocks share one `scanBudget`: the scan reads at most `MAX_MESSAGE_CHARS` characters of it.
 */
export function readMessageArtifacts(
  message: Message,
  options: ExtractArtifactsOptions = {},
  lineCache?: LineCache,
): MessageArtifacts {
  if (message.role === 'system' || message.source.kind === 'plugin') return NOTHING_READ
  const origin: ArtifactOrigin =
    message.role === 'assistant' ? 'assistant' : message.source.kind === 'tool' ? 'tool' : 'user'
  const mentions = new ArtifactCollector()
  const mention = (artifactClass: ArtifactClass, text: string, from: ArtifactOrigin): void =>
    mentions.add(artifactClass, text, 0, from)
  const toolSteps: (MessageToolCall | MessageToolResult)[] = []
  let characters = 0
  const tokenOptions = { workspaceRoot: options.workspaceRoot, lineCache, budget: scanBudget() }
  const sinkFor =
    (from: ArtifactOrigin): ArtifactSink =>
    (artifactClass, text) =>
      mention(artifactClass, text, from)
  const readText = (text: string, source: TextSource, from: ArtifactOrigin) => {
    characters += text.length
    return scanText(text, source, sinkFor(from), tokenOptions)
  }
  const readResult = (block: ToolResultBlock): void => {
    const { exitCode, firstLine, ...scan } = readText(resultText(block), 'tool', 'tool')
    const errors = [...scan.errors]
    // An error result without a recognised headline: its first line says what went wrong.
    if (block.isError && errors.length === 0 && firstLine !== undefined) {
      const line = normalizeErrorText(firstLine)
      if (line !== '') {
        mention('error', line, 'tool')
        errors.push(line)
      }
    }
    toolSteps.push({
      kind: 'result',
      toolCallId: block.toolCallId,
      isError: block.isError === true,
      ...(exitCode === undefined ? {} : { exitCode }),
      errors,
    })
  }
  const readBlock = (block: ContentBlock): void => {
    switch (block.type) {
      case 'text':
        readText(block.text, message.role === 'assistant' ? 'assistant' : 'user', origin)
        return
      case 'reasoning':
        if (options.includeReasoning) readText(block.text, 'assistant', origin)
        return
      case 'tool-call': {
        characters += block.name.length + block.arguments.length
        const toolKind = resolveToolKind(options.toolKinds, block.name, block.arguments)
        const read = readToolCallArguments(block.name, block.arguments, sinkFor('tool'), tokenOptions)
        toolSteps.push({
          kind: 'call',
          id: block.id,
          name: block.name,
          arguments: block.arguments,
          toolKind,
          ...(read.command === undefined ? {} : { command: read.command }),
          paths: [...new Set(read.paths)],
          fileAction: changesNamedFiles(block.name, toolKind) ? 'changed' : 'read',
        })
        return
      }
      case 'tool-result':
        readResult(block)
        return
      case 'image':
        return
    }
  }
  for (const block of message.content) readBlock(block)
  return { mentions: mentions.list(), mentionKeys: mentions.keys(), toolSteps, characters }
}
