import type { ArtifactExtraction, ExtractArtifactsOptions } from './artifact-extraction.ts'
import { ArtifactExtractor } from './artifact-extractor.ts'
import type { LoggedMessage } from './logged-message.ts'

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
