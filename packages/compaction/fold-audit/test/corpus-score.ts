import type { ArtifactClass } from '../src/index.ts'
import { ARTIFACT_CLASSES, extractArtifacts } from '../src/index.ts'
import type { CorpusSample } from './corpus-sample.ts'

/** Counts of one class over the corpus (micro-averaged: every sample's items pooled). */
export interface ClassScore {
  /** Hand-labelled items. */
  readonly labelled: number
  /** Items the extractor found. */
  readonly extracted: number
  /** Items in both. */
  readonly correct: number
}

/** What the extractor found that the labels do not have (false positives) and the reverse (misses), per sample. */
export interface CorpusDifference {
  readonly sample: string
  readonly class: ArtifactClass
  readonly kind: 'extra' | 'missed'
  readonly text: string
}

/** Scores `extractArtifacts` against the hand labels of every sample: per class, the distinct texts of each sample compared as sets. */
export function scoreCorpus(samples: readonly CorpusSample[]): {
  scores: Record<ArtifactClass, ClassScore>
  differences: CorpusDifference[]
} {
  const scores = Object.fromEntries(
    ARTIFACT_CLASSES.map((artifactClass) => [artifactClass, { labelled: 0, extracted: 0, correct: 0 }]),
  ) as Record<ArtifactClass, { labelled: number; extracted: number; correct: number }>
  const differences: CorpusDifference[] = []
  for (const sample of samples) {
    const { artifacts } = extractArtifacts(sample.messages)
    for (const artifactClass of ARTIFACT_CLASSES) {
      const found = new Set(
        artifacts.filter((artifact) => artifact.class === artifactClass).map((artifact) => artifact.text),
      )
      const labelled = new Set(sample.expected[artifactClass])
      const score = scores[artifactClass]
      score.labelled += labelled.size
      score.extracted += found.size
      for (const text of found) {
        if (labelled.has(text)) score.correct++
        else differences.push({ sample: sample.name, class: artifactClass, kind: 'extra', text })
      }
      for (const text of labelled)
        if (!found.has(text)) differences.push({ sample: sample.name, class: artifactClass, kind: 'missed', text })
    }
  }
  return { scores, differences }
}

/** correct / extracted (1 when nothing was extracted). */
export const precision = (score: ClassScore): number => (score.extracted === 0 ? 1 : score.correct / score.extracted)
/** correct / labelled (1 when nothing was labelled). */
export const recall = (score: ClassScore): number => (score.labelled === 0 ? 1 : score.correct / score.labelled)

/** The README's table of the scores (Markdown), one row per class, most important class first. */
export function renderScoreTable(
  scores: Readonly<Record<ArtifactClass, ClassScore>>,
  samples: number,
  folder = 'test/corpus',
): string {
  const rows = ARTIFACT_CLASSES.map((artifactClass) => {
    const score = scores[artifactClass]
    return `| \`${artifactClass}\` | ${score.labelled} | ${score.extracted} | ${score.correct} | ${precision(score).toFixed(3)} | ${recall(score).toFixed(3)} |`
  })
  return [
    `${samples} samples (\`${folder}/*.sample\`), every class:`,
    '',
    '| class | labelled | extracted | correct | precision | recall |',
    '|---|---|---|---|---|---|',
    ...rows,
  ].join('\n')
}
