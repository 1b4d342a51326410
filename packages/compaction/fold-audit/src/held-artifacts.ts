import type { ArtifactClass } from './artifact.ts'
import { ARTIFACT_CLASSES, isArtifactClass } from './artifact.ts'

/** An artifact of a previous checkpoint, as `auditFold` compares it. */
export interface HeldArtifact {
  readonly class: ArtifactClass
  readonly text: string
  /**
   * How often the region it came from mentioned it (for an artifact read from a checkpoint's text,
   * how often that text does).
   */
  readonly mentions: number
}

/**
 * What a checkpoint holds, as the audit of the fold that wrote it logs it
 * (`FoldAudit.heldInCheckpoint`): per class, each text with its mentions
 * (`{ path: { 'src/a.ts': 3 } }`), a class without any left out. Plain JSON, and about a
 * third of the bytes of a list of `{ class, text, mentions }`, which matters for a payload
 * every fold logs.
 */
export type HeldArtifacts = Readonly<Partial<Record<ArtifactClass, Readonly<Record<string, number>>>>>

/**
 * Whether `value` is a {@link HeldArtifact}: a known class, a non-empty text and a positive whole
 * number of mentions.
 */
export function isHeldArtifact(value: unknown): value is HeldArtifact {
  if (value === null || typeof value !== 'object') return false
  const { class: artifactClass, text, mentions } = value as Record<string, unknown>
  return (
    isArtifactClass(artifactClass) &&
    typeof text === 'string' &&
    text !== '' &&
    Number.isSafeInteger(mentions) &&
    (mentions as number) > 0
  )
}

/**
 * The artifacts of `compared` that `inCheckpoint` flags (by index), each class and text once (the
 * mentions of its first).
 */
export function heldArtifacts(compared: readonly HeldArtifact[], inCheckpoint: Uint8Array): HeldArtifacts {
  const byClass = new Map<ArtifactClass, Map<string, number>>()
  for (let index = 0; index < compared.length; index++) {
    if (!inCheckpoint[index]) continue
    const { class: artifactClass, text, mentions } = compared[index]!
    let texts = byClass.get(artifactClass)
    if (texts === undefined) byClass.set(artifactClass, (texts = new Map()))
    if (!texts.has(text)) texts.set(text, mentions)
  }
  // `Object.fromEntries` defines each text as an own property, also one named `__proto__`.
  return Object.fromEntries(
    ARTIFACT_CLASSES.filter((artifactClass) => byClass.has(artifactClass)).map((artifactClass) => [
      artifactClass,
      Object.fromEntries(byClass.get(artifactClass)!),
    ]),
  )
}

/**
 * `held` as the list `auditFold` compares (`previousCheckpointArtifacts`), in class order.
 * @throws TypeError naming the entry when `held` is not {@link HeldArtifacts} (`where` says whose it is).
 */
export function heldArtifactList(held: unknown, where = 'heldInCheckpoint'): HeldArtifact[] {
  if (held === null || typeof held !== 'object' || Array.isArray(held))
    throw new TypeError(`${where} must be an object of artifact classes, got ${JSON.stringify(held) ?? String(held)}`)
  const list: HeldArtifact[] = []
  for (const [artifactClass, texts] of Object.entries(held)) {
    if (!isArtifactClass(artifactClass))
      throw new TypeError(
        `${where}: ${JSON.stringify(artifactClass)} is not an artifact class (${ARTIFACT_CLASSES.join(', ')})`,
      )
    if (texts === null || typeof texts !== 'object' || Array.isArray(texts))
      throw new TypeError(
        `${where}.${artifactClass} must be an object of texts and their mentions, got ${JSON.stringify(texts)}`,
      )
    for (const [text, mentions] of Object.entries(texts as Record<string, unknown>)) {
      const artifact = { class: artifactClass, text, mentions }
      if (!isHeldArtifact(artifact))
        throw new TypeError(
          `${where}.${artifactClass}[${JSON.stringify(text)}] must be a non-empty text with mentions ≥ 1, ` +
            `got ${JSON.stringify(mentions)}`,
        )
      list.push(artifact)
    }
  }
  return list.toSorted((a, b) => ARTIFACT_CLASSES.indexOf(a.class) - ARTIFACT_CLASSES.indexOf(b.class))
}
