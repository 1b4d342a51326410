import type { Artifact } from './artifact.ts'
import { ArtifactCollector } from './artifact-collector.ts'
import type { ExtractArtifactsOptions } from './artifact-extraction.ts'
import { scanText } from './scan-text.ts'

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
