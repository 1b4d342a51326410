import type { ContentBlock, ToolResultBlock } from '@warmfold/llm'
import type { Artifact, ArtifactOrigin } from './artifact.ts'
import { ArtifactCollector } from './artifact-collector.ts'
import { cleanText } from './clean-text.ts'
import { normalizeErrorText } from './error-headlines.ts'
import { exitCodeOf } from './exit-status.ts'
import type { ArtifactSink } from './line-tokens.ts'
import type { LoggedMessage } from './logged-message.ts'
import { checkLoggedMessages } from './logged-message.ts'
import type { TextSource } from './scan-text.ts'
import { scanText } from './scan-text.ts'
import { readToolCallArguments } from './tool-call-arguments.ts'
import type { ToolKind, ToolKinds } from './tool-kind.ts'
import { changesNamedFiles, resolveToolKind } from './tool-kind.ts'

/** Options of {@link extractArtifacts}. */
export interface ExtractArtifactsOptions {
  /** Absolute paths inside this folder are written relative to it (`/home/dev/app/src/a.ts` → `src/a.ts`). */
  readonly workspaceRoot?: string
  /** The host's tool kinds; undeclared tools get `defaultToolKind`. Decides which paths a call changed. */
  readonly toolKinds?: ToolKinds
  /**
   * Read reasoning blocks too (default `false`): reasoning is the model's scratch work, often not
   * replayed to it later, so what only it mentions was never a fact the conversation held.
   */
  readonly includeReasoning?: boolean
}

/** What a tool call's result said. */
export interface ToolCallResult {
  /** Seq of the message holding the result. */
  readonly seq: number
  readonly isError: boolean
  /** The exit code the result text reports (`Exit code: 1`), when it reports one. */
  readonly exitCode?: number
  /** The error headlines found in the result, normalized, in order. */
  readonly errors: readonly string[]
}

/** One tool call of the region, with its result when the region holds it. */
export interface ToolCallRecord {
  /** Seq of the assistant message holding the call. */
  readonly seq: number
  readonly id: string
  readonly name: string
  /** The raw arguments, byte for byte as the model wrote them. */
  readonly arguments: string
  readonly kind: ToolKind
  /** The shell command it ran, normalized. */
  readonly command?: string
  /** The paths its path-like arguments name, normalized, each once, in order. */
  readonly paths: readonly string[]
  /** `changed` when the call writes the files it names (edit, write, patch), else `read`. */
  readonly fileAction: 'read' | 'changed'
  readonly result?: ToolCallResult
}

/** The artifacts of a region and the facts about its tool calls that the trail and the behaviour measures read. */
export interface ArtifactExtraction {
  /** One entry per (class, text), in order of first mention. */
  readonly artifacts: readonly Artifact[]
  /** The tool calls, in order. */
  readonly toolCalls: readonly ToolCallRecord[]
  /** Characters of text the region held (text, tool-call arguments, tool results). */
  readonly characters: number
}

function resultText(block: ToolResultBlock): string {
  let text = ''
  for (const part of block.content) if (part.type === 'text') text += (text === '' ? '' : '\n') + part.text
  return text
}

/** The first non-empty line of a text, as an error headline. */
function firstLine(text: string): string {
  for (const line of cleanText(text).split('\n')) if (line.trim() !== '') return normalizeErrorText(line)
  return ''
}

/**
 * Extracts the artifacts of a conversation region: tool-call arguments first (paths from
 * path-like keys, commands from shell tools), then tool results, then text. Messages written
 * by a plugin (an earlier checkpoint, `compaction/after` messages) and system messages are not
 * read: the audit checks an earlier checkpoint on its own (`previousCheckpoint`).
 *
 * Deterministic, and linear in the size of the region.
 * @throws TypeError when `messages` is not `{ seq, message }[]` in log order.
 */
export function extractArtifacts(messages: readonly LoggedMessage[], options: ExtractArtifactsOptions = {}): ArtifactExtraction {
  checkLoggedMessages(messages, 'extractArtifacts(messages)')
  const collector = new ArtifactCollector()
  const calls: { record: Omit<ToolCallRecord, 'result'>; result?: ToolCallResult }[] = []
  const callsById = new Map<string, (typeof calls)[number]>()
  let characters = 0
  const tokenOptions = options.workspaceRoot === undefined ? {} : { workspaceRoot: options.workspaceRoot }

  const sinkFor = (seq: number, origin: ArtifactOrigin): ArtifactSink => (artifactClass, text) => collector.add(artifactClass, text, seq, origin)
  const readText = (text: string, source: TextSource, seq: number, origin: ArtifactOrigin) => {
    characters += text.length
    return scanText(text, source, sinkFor(seq, origin), tokenOptions)
  }
  const readResult = (block: ToolResultBlock, seq: number): void => {
    const text = resultText(block)
    const { errors } = readText(text, 'tool', seq, 'tool')
    const found = [...errors]
    // An error result without a recognised headline: its first line says what went wrong.
    if (block.isError && found.length === 0) {
      const line = firstLine(text)
      if (line !== '') {
        collector.add('error', line, seq, 'tool')
        found.push(line)
      }
    }
    const call = callsById.get(block.toolCallId)
    if (call === undefined) return
    const exitCode = exitCodeOf(text)
    call.result = { seq, isError: block.isError === true, ...(exitCode === undefined ? {} : { exitCode }), errors: found }
  }
  const readBlock = (block: ContentBlock, seq: number, role: string, origin: ArtifactOrigin): void => {
    switch (block.type) {
      case 'text':
        readText(block.text, role === 'assistant' ? 'assistant' : 'user', seq, origin)
        return
      case 'reasoning':
        if (options.includeReasoning) readText(block.text, 'assistant', seq, origin)
        return
      case 'tool-call': {
        characters += block.name.length + block.arguments.length
        const kind = resolveToolKind(options.toolKinds, block.name, block.arguments)
        const read = readToolCallArguments(block.name, block.arguments, sinkFor(seq, 'tool'), tokenOptions)
        const entry = {
          record: {
            seq,
            id: block.id,
            name: block.name,
            arguments: block.arguments,
            kind,
            ...(read.command === undefined ? {} : { command: read.command }),
            paths: [...new Set(read.paths)],
            fileAction: changesNamedFiles(block.name, kind) ? ('changed' as const) : ('read' as const),
          },
        }
        calls.push(entry)
        callsById.set(block.id, entry)
        return
      }
      case 'tool-result':
        readResult(block, seq)
        return
      case 'image':
        return
    }
  }

  for (const { seq, message } of messages) {
    if (message.role === 'system' || message.source.kind === 'plugin') continue
    const origin: ArtifactOrigin = message.role === 'assistant' ? 'assistant' : message.source.kind === 'tool' ? 'tool' : 'user'
    for (const block of message.content) readBlock(block, seq, message.role, origin)
  }
  return {
    artifacts: collector.list(),
    toolCalls: calls.map(({ record, result }) => (result === undefined ? record : { ...record, result })),
    characters,
  }
}
