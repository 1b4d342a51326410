import type { Artifact } from './artifact.ts'
import { occursAsWord } from './occurs-as-word.ts'
import type { VisibleItem } from './searchable-text.ts'
import { searchableText } from './searchable-text.ts'

/** A text searched for artifacts, and its lower-cased form (made only when user messages are searched). */
export interface SearchedText {
  readonly exact: string
  lower(): string
}

/** `items` as a {@link SearchedText}. */
export function searchedText(items: readonly VisibleItem[]): SearchedText {
  return { exact: searchableText(items), lower: () => searchableText(items, { lowerCase: true }) }
}

/**
 * One text as a {@link SearchedText}: its lower-cased form is the searchable text's, lower-cased
 * (what `searchableText` makes of a single text).
 */
export function searchedSingleText(text: string): SearchedText {
  const exact = searchableText([text])
  return { exact, lower: () => exact.toLowerCase() }
}

/** The texts an artifact may appear as: a number also with or without the space before its unit (`1.8 GB`, `1.8GB`). */
function variants(artifact: Pick<Artifact, 'class' | 'text'>): string[] {
  if (artifact.class !== 'number') return [artifact.text]
  const spaced = /^(.*\d) (\D.*)$/.exec(artifact.text)
  if (spaced) return [artifact.text, `${spaced[1]}${spaced[2]}`]
  const glued = /^(.*\d)([^\d\s.,].*)$/.exec(artifact.text)
  return glued ? [artifact.text, `${glued[1]} ${glued[2]}`] : [artifact.text]
}

/**
 * Which of `artifacts` occur in `texts`, one flag per artifact for each text (the same
 * normalization on both sides; user messages case-insensitively, as `occursAsWord` counts an
 * occurrence). An artifact `skip` flags is not searched for (its flags stay 0).
 */
export function artifactPresence(
  artifacts: readonly Pick<Artifact, 'class' | 'text'>[],
  texts: readonly SearchedText[],
  skip: Uint8Array,
): Uint8Array[] {
  const patterns = artifacts.map((artifact, index) => {
    if (skip[index]) return []
    const texts = variants(artifact)
    return artifact.class === 'user-message' ? texts.map((text) => text.toLowerCase()) : texts
  })
  return texts.map((text) => {
    const result = new Uint8Array(artifacts.length)
    let lower: string | undefined
    for (let index = 0; index < artifacts.length; index++) {
      if (patterns[index]!.length === 0) continue
      const within = artifacts[index]!.class === 'user-message' ? (lower ??= text.lower()) : text.exact
      if (patterns[index]!.some((pattern) => occursAsWord(within, pattern))) result[index] = 1
    }
    return result
  })
}
