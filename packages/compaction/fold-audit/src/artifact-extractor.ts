import type { Message } from '@warmfold/llm'
import type { Artifact } from './artifact.ts'
import { ArtifactCollector } from './artifact-collector.ts'
import type {
  ArtifactExtraction,
  ExtractArtifactsOptions,
  ToolCallRecord,
  ToolCallResult,
} from './artifact-extraction.ts'
import type { LoggedMessage } from './logged-message.ts'
import { LineCache } from './line-tokens.ts'
import { checkLoggedMessages } from './logged-message.ts'
import type { MessageArtifacts } from './message-artifacts.ts'
import { readMessageArtifacts } from './message-artifacts.ts'
import { scanText } from './scan-text.ts'

/**
 * Extracts the artifacts of regions, reading each message once: what a frozen message holds
 * (a session's messages are deep-frozen when they are logged) is kept, per message object,
 * for as long as the message lives, so extracting a region whose messages were read before
 * (by {@link read}, or by an earlier region) only merges. A message that is not frozen could
 * change after it was read, so it is read again at every extraction.
 *
 * One extractor reads with one set of options; the result of {@link extract} is the same as
 * `extractArtifacts(messages, options)`.
 */
export class ArtifactExtractor {
  private readonly readings = new WeakMap<Message, MessageArtifacts>()
  /** The summaries read from checkpoint messages, by message (with the text they were read from). */
  private readonly checkpoints = new WeakMap<
    Message,
    { readonly text: string; readonly artifacts: readonly Artifact[] }
  >()
  /** Lines this extractor scanned, replayed when a message repeats them (a file read again, a command run again). */
  private readonly lines = new LineCache()

  constructor(readonly options: ExtractArtifactsOptions = {}) {}

  /** Reads `message` now (once), so a later {@link extract} of a region holding it only merges. */
  read(message: Message): MessageArtifacts {
    const known = this.readings.get(message)
    if (known !== undefined) return known
    const artifacts = readMessageArtifacts(message, this.options, this.lines)
    if (Object.isFrozen(message)) this.readings.set(message, artifacts)
    return artifacts
  }

  /**
   * The artifacts of `summary`, the summary text a checkpoint `message` holds, read as
   * `auditFold` reads a previous checkpoint (`checkpointArtifacts`, with this extractor's
   * workspace root) and kept with the message, so the next fold's audit does not read the
   * checkpoint it replaces again (the engine reads a checkpoint when it is logged, as it reads
   * every message). Read again when `summary` differs from the text kept, or `message` is not frozen.
   */
  readCheckpoint(message: Message, summary: string): readonly Artifact[] {
    const known = this.checkpoints.get(message)
    if (known !== undefined && known.text === summary) return known.artifacts
    const artifacts = Object.freeze(checkpointArtifacts(summary, this.options))
    if (Object.isFrozen(message)) this.checkpoints.set(message, { text: summary, artifacts })
    return artifacts
  }

  /**
   * Forgets the lines it scanned (the readings of messages stay, as long as their messages do).
   * A line can keep the whole text it was split from alive, so a host that closes a session
   * lets its texts go this way; the engine does it at every `session/close`.
   */
  forgetLines(): void {
    this.lines.clear()
  }

  /** Whether `message` was read before and its reading is kept. */
  has(message: Message): boolean {
    return this.readings.has(message)
  }

  /**
   * The artifacts of a region: every mention of the same (class, text) folded into one artifact
   * with its first and newest seq, and each tool call with the result the region holds for it.
   * @throws TypeError when `messages` is not `{ seq, message }[]` in log order.
   */
  extract(messages: readonly LoggedMessage[]): ArtifactExtraction {
    checkLoggedMessages(messages, 'extractArtifacts(messages)')
    const collector = new ArtifactCollector()
    const calls: { record: ToolCallRecord; result?: ToolCallResult }[] = []
    const callsById = new Map<string, (typeof calls)[number]>()
    let characters = 0
    for (const { seq, message } of messages) {
      const read = this.read(message)
      characters += read.characters
      const { mentions, mentionKeys } = read
      for (let index = 0; index < mentions.length; index++) {
        const mention = mentions[index]!
        collector.add(mention.class, mention.text, seq, mention.origin, mention.mentions, mentionKeys[index])
      }
      for (const step of read.toolSteps) {
        if (step.kind === 'call') {
          const { kind: _step, toolKind, ...call } = step
          const entry = { record: { seq, ...call, kind: toolKind } }
          calls.push(entry)
          callsById.set(step.id, entry)
          continue
        }
        const call = callsById.get(step.toolCallId)
        if (call === undefined) continue
        const { kind: _step, toolCallId: _id, ...result } = step
        call.result = { seq, ...result }
      }
    }
    return {
      artifacts: collector.list(),
      toolCalls: calls.map(({ record, result }) => (result === undefined ? record : { ...record, result })),
      characters,
    }
  }
}

/**
 * Extracts the artifacts of a conversation region: tool-call arguments first (paths from
 * path-like keys, commands from shell tools), then tool results, then text. Messages written
 * by a plugin (an earlier checkpoint, `compaction/after` messages) and system messages are not
 * read: the audit checks an earlier checkpoint on its own (`previousCheckpoint`). To extract
 * several regions of one session, an {@link ArtifactExtractor} reads each message only once.
 *
 * Deterministic, and linear in the size of the region.
 * @throws TypeError when `messages` is not `{ seq, message }[]` in log order.
 */
export function extractArtifacts(
  messages: readonly LoggedMessage[],
  options: ExtractArtifactsOptions = {},
): ArtifactExtraction {
  return new ArtifactExtractor(options).extract(messages)
}

/**
 * The artifacts of a checkpoint's summary text, as {@link auditFold} compares a previous
 * checkpoint: read like an assistant's text (its prose paraphrases; errors and commands count
 * only in code spans and blocks), every mention at seq 0.
 */
export function checkpointArtifacts(
  text: string,
  options: Pick<ExtractArtifactsOptions, 'workspaceRoot'> = {},
): Artifact[] {
  const collector = new ArtifactCollector()
  scanText(text, 'assistant', (artifactClass, found) => collector.add(artifactClass, found, 0, 'assistant'), options)
  return collector.list()
}
