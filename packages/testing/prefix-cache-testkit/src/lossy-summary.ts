import type { Message } from '@warmfold/llm'
import { tokensOf } from './cache-profile.ts'
import type { PlantedArtifact, PlantedClass } from './coding-workload.ts'
import { codingCorrection, codingStep } from './coding-workload.ts'
import { minimumWorkloadSummaryTokens, workloadSummary } from './workload-summary.ts'
import { createRandom } from './workload-text.ts'

/**
 * How often the scripted summarizer keeps an artifact of the region verbatim, by class: the
 * published retention of 43 real Claude Code compactions (file paths 9.8 %, commands 0.2 %).
 * That measurement has no figure for error messages; they are kept as often as paths (an
 * assumption, stated here and in the README).
 */
export const LOSSY_RETENTION: Readonly<Record<PlantedClass, number>> = Object.freeze({
  path: 0.098,
  command: 0.002,
  error: 0.098,
})

/** A 32-bit FNV-1a hash: the seed of one artifact's draw. */
function hash(text: string): number {
  let value = 0x811c9dc5
  for (let index = 0; index < text.length; index++) value = Math.imul(value ^ text.charCodeAt(index), 0x01000193) >>> 0
  return value
}

/** Whether the lossy summarizer keeps `artifact`: one seeded draw per artifact, the same in every run. */
export function lossyKeeps(artifact: PlantedArtifact, seed = 0): boolean {
  return createRandom(hash(`${seed}\u0000${artifact.class}\u0000${artifact.text}`))() < LOSSY_RETENTION[artifact.class]
}

/** The tool-call ids `call-N` of `messages`, as step indices. */
function stepIndices(messages: readonly Message[]): number[] {
  const indices: number[] = []
  for (const message of messages) {
    for (const block of message.content) {
      const match = block.type === 'tool-call' ? /^call-(\d+)$/.exec(block.id) : null
      if (match) indices.push(Number(match[1]))
    }
  }
  return indices
}

/**
 * What the coding workload planted in `messages` (a fold's region): the artifacts of each tool
 * step whose call is there (by its id), and of each user correction there. Checkpoints and
 * other plugin messages plant nothing.
 */
export function plantedIn(messages: readonly Message[], readChars: number, turns: number): PlantedArtifact[] {
  const planted = stepIndices(messages).flatMap((index) => codingStep(index, readChars).artifacts)
  for (const message of messages) {
    if (message.role !== 'user' || message.source.kind !== 'user') continue
    const text = message.content.map((block) => (block.type === 'text' ? block.text : '')).join('')
    for (let turn = 1; turn < turns; turn++)
      if (text === codingCorrection(turn).text) planted.push(...codingCorrection(turn).artifacts)
  }
  return planted
}

/**
 * The lossy summarizer of the coding workload: the realistic checkpoint of fold `fold`
 * (`workloadSummary`), plus the artifacts of the region it keeps (each with its
 * {@link LOSSY_RETENTION} chance, see {@link lossyKeeps}): paths under Files and Code, errors
 * under Errors and Fixes, commands under Critical Context. The whole stays within `maxTokens`.
 */
export function lossySummary(
  fold: number,
  region: readonly Message[],
  options: { readonly readChars: number; readonly turns: number; readonly maxTokens?: number },
): string {
  const kept = plantedIn(region, options.readChars, options.turns).filter((artifact) => lossyKeeps(artifact))
  const lines: Record<PlantedClass, string[]> = { path: [], command: [], error: [] }
  for (const artifact of kept)
    lines[artifact.class].push(artifact.class === 'command' ? `- Ran \`${artifact.text}\`` : `- ${artifact.text}`)
  const extra = tokensOf([...lines.path, ...lines.error, ...lines.command].join('\n').length + 3 * 3)
  const cap =
    options.maxTokens === undefined
      ? undefined
      : Math.max(minimumWorkloadSummaryTokens(fold), options.maxTokens - extra)
  let text = workloadSummary(fold, cap === undefined ? {} : { maxTokens: cap })
  const insert = (heading: string, added: readonly string[]) => {
    if (added.length > 0) text = text.replace(`${heading}\n`, `${heading}\n${added.join('\n')}\n`)
  }
  insert('## Files and Code', lines.path)
  insert('## Errors and Fixes', lines.error)
  insert('## Critical Context', lines.command)
  return text
}
