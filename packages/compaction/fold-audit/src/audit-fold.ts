import type { Artifact, ArtifactClass } from './artifact.ts'
import { ARTIFACT_CLASSES, isArtifactClass } from './artifact.ts'
import type { CheckpointHealth } from './checkpoint-health.ts'
import { checkpointHealth } from './checkpoint-health.ts'
import type { ExtractArtifactsOptions } from './artifact-extraction.ts'
import { artifactKey } from './artifact-collector.ts'
import { checkpointArtifacts } from './artifact-extractor.ts'
import type { VisibleItem } from './searchable-text.ts'
import { artifactPresence, searchedSingleText, searchedText } from './artifact-presence.ts'
import { rankRoundRobin } from './rank-round-robin.ts'
import type { HeldArtifact, HeldArtifacts } from './held-artifacts.ts'
import { heldArtifacts, isHeldArtifact } from './held-artifacts.ts'

/** The default bound of {@link FoldAudit.dropped} and {@link FoldAudit.vanishedFromPreviousCheckpoint}. */
export const DEFAULT_MAX_DROPPED = 20

/** What {@link auditFold} compares. */
export interface AuditFoldInput {
  /** The artifacts of the folded region: `extractArtifacts(region).artifacts`. */
  readonly folded: readonly Artifact[]
  /**
   * The new checkpoint's text as the model will read it (the summary, and the artifact trail if the
   * engine appends one).
   */
  readonly checkpointText: string
  /**
   * Everything else the model reads after the fold: carried messages (pins, kept user messages),
   * the retained tail, appended messages; messages or plain texts.
   */
  readonly visibleAfter?: readonly VisibleItem[]
  /**
   * The text of the checkpoint this fold replaces, when there was one: its artifacts should survive
   * too, and its size is the yardstick of a collapse.
   */
  readonly previousCheckpoint?: string
  /** The sections the summary instruction asks for (`'Goal and Intent'`, `'## Next Step'`). */
  readonly requiredSections?: readonly string[]
  /** Bound of the dropped and vanished lists (default {@link DEFAULT_MAX_DROPPED}); the totals count every item. */
  readonly maxDropped?: number
  /** The summary call's finish reason: `max-tokens` marks the checkpoint truncated. */
  readonly finishReason?: string
  /**
   * The artifacts of `previousCheckpoint` to compare, so that this fold does not read that text:
   * what the audit of the fold that wrote it found there (its {@link FoldAudit.heldInCheckpoint}),
   * or what `checkpointArtifacts` (or `ArtifactExtractor.readCheckpoint`) read in its text before.
   * Without it, `previousCheckpoint` is read here, as `checkpointArtifacts` reads it.
   */
  readonly previousCheckpointArtifacts?: readonly HeldArtifact[]
  /**
   * Artifacts (by `artifactKey`) the caller wrote into `checkpointText` itself, each exactly and
   * between characters that are not word characters: the artifact trail's `written`. They count
   * as found in the checkpoint without a search, which is most of the audit's work.
   */
  readonly writtenInCheckpoint?: ReadonlySet<string>
  /** How the previous checkpoint's artifacts are extracted (its `workspaceRoot` should match the region's). */
  readonly extraction?: Pick<ExtractArtifactsOptions, 'workspaceRoot'>
}

/** Retention of one artifact class. */
export interface ClassRetention {
  /** Distinct artifacts of the class in the folded region. */
  readonly seen: number
  /** Those the model still reads after the fold (checkpoint or anything else visible). */
  readonly kept: number
  /** Those found in the checkpoint text itself (a subset of `kept`). */
  readonly keptInCheckpoint: number
}

/** An artifact of the folded region that nothing visible after the fold holds. */
export interface DroppedArtifact extends Artifact {
  /**
   * `true` for what can be looked up again (a path on disk, a URL); `false` for what only the
   * transcript held (the user's words, errors, commands, identifiers, numbers).
   */
  readonly recoverable: boolean
}

/** An artifact of the previous checkpoint that nothing visible after this fold holds. */
export type VanishedArtifact = HeldArtifact

/** The audit of one fold; plain JSON (every field defined), the payload of a `compaction/audit` event. */
export interface FoldAudit {
  /** Per class, every class present. */
  readonly classes: Readonly<Record<ArtifactClass, ClassRetention>>
  /** The most important dropped artifacts, at most `maxDropped`, ranked as `rankRoundRobin` says. */
  readonly dropped: readonly DroppedArtifact[]
  /** Every dropped artifact, the listed ones included. */
  readonly droppedTotal: number
  /**
   * Artifacts of the previous checkpoint compared (0 without one):
   * `input.previousCheckpointArtifacts`, or those read in its text.
   */
  readonly previousCheckpointArtifacts: number
  /**
   * The previous checkpoint's artifacts that nothing visible holds now, at most `maxDropped`,
   * ranked like `dropped`.
   */
  readonly vanishedFromPreviousCheckpoint: readonly VanishedArtifact[]
  readonly vanishedTotal: number
  readonly health: CheckpointHealth
  /**
   * What the new checkpoint's text holds of what was compared (the folded region's artifacts
   * and the previous checkpoint's), each once: logged with the audit, it is what the next fold
   * compares as this checkpoint's artifacts (`previousCheckpointArtifacts`, through
   * `heldArtifactList`), so that no fold reads the checkpoint it replaces. What the model wrote
   * that the conversation never held is not in it.
   */
  readonly heldInCheckpoint: HeldArtifacts
}

const byText = (a: { readonly text: string }, b: { readonly text: string }): number =>
  a.text < b.text ? -1 : a.text > b.text ? 1 : 0

function fail(message: string): never {
  throw new TypeError(`auditFold: ${message}`)
}

function checkInput(input: AuditFoldInput): number {
  if (input === null || typeof input !== 'object') throw new TypeError('auditFold(input) must be an object')
  const mustBe = (key: keyof AuditFoldInput, what: string): never =>
    fail(`${key} must be ${what}, got ${typeof input[key]}`)
  if (!Array.isArray(input.folded)) mustBe('folded', 'the artifacts of the folded region (an array)')
  for (let index = 0; index < input.folded.length; index++) {
    const artifact = input.folded[index]
    if (
      artifact === null ||
      typeof artifact !== 'object' ||
      typeof artifact.text !== 'string' ||
      artifact.text === '' ||
      !isArtifactClass(artifact.class)
    )
      fail(`folded[${index}] is not an artifact (class and non-empty text): ${JSON.stringify(artifact)}`)
  }
  if (typeof input.checkpointText !== 'string') mustBe('checkpointText', 'a string')
  if (input.previousCheckpoint !== undefined && typeof input.previousCheckpoint !== 'string')
    mustBe('previousCheckpoint', 'a string')
  if (input.previousCheckpointArtifacts !== undefined) {
    if (input.previousCheckpoint === undefined)
      fail('previousCheckpointArtifacts was given without the previousCheckpoint they were read from')
    if (!Array.isArray(input.previousCheckpointArtifacts))
      mustBe('previousCheckpointArtifacts', 'an array of artifacts')
    for (const [index, artifact] of input.previousCheckpointArtifacts.entries()) {
      if (!isHeldArtifact(artifact))
        fail(
          `previousCheckpointArtifacts[${index}] is not an artifact (class, non-empty text, mentions ≥ 1): ` +
            JSON.stringify(artifact),
        )
    }
  }
  if (input.writtenInCheckpoint !== undefined && !(input.writtenInCheckpoint instanceof Set))
    mustBe('writtenInCheckpoint', "a Set of artifact keys (the artifact trail's written)")
  if (input.visibleAfter !== undefined && !Array.isArray(input.visibleAfter))
    mustBe('visibleAfter', 'an array of messages or texts')
  const maxDropped = input.maxDropped ?? DEFAULT_MAX_DROPPED
  if (!Number.isSafeInteger(maxDropped) || maxDropped < 0)
    fail(`maxDropped must be a non-negative integer, got ${JSON.stringify(input.maxDropped)}`)
  return maxDropped
}

/**
 * Audits one fold without a model: which artifacts of the folded region the model still reads
 * afterwards (verbatim, after normalization, in the checkpoint or anything else visible), per
 * class; a ranked, bounded list of what was dropped; what of the previous checkpoint vanished;
 * and the checkpoint's health. One `indexOf` search per artifact in each visible text
 * (see `occursAsWord`).
 * @throws TypeError for input of the wrong shape, naming the field.
 */
export function auditFold(input: AuditFoldInput): FoldAudit {
  const maxDropped = checkInput(input)
  const checkpoint = searchedSingleText(input.checkpointText)
  const rest = searchedText(input.visibleAfter ?? [])

  const previous: readonly HeldArtifact[] =
    input.previousCheckpoint === undefined
      ? []
      : (input.previousCheckpointArtifacts ?? checkpointArtifacts(input.previousCheckpoint, input.extraction))

  const all = [...input.folded, ...previous]
  // What the caller wrote into the checkpoint is there: found without a search.
  const written = new Uint8Array(all.length)
  const writtenKeys = input.writtenInCheckpoint
  if (writtenKeys !== undefined && writtenKeys.size > 0)
    for (let index = 0; index < all.length; index++)
      if (writtenKeys.has(artifactKey(all[index]!.class, all[index]!.text))) written[index] = 1
  const [inCheckpoint, inRest] = artifactPresence(all, [checkpoint, rest], written) as [Uint8Array, Uint8Array]
  for (let index = 0; index < all.length; index++) if (written[index]) inCheckpoint[index] = 1
  const classes = Object.fromEntries(
    ARTIFACT_CLASSES.map((artifactClass) => [artifactClass, { seen: 0, kept: 0, keptInCheckpoint: 0 }]),
  ) as Record<ArtifactClass, { seen: number; kept: number; keptInCheckpoint: number }>
  const dropped: DroppedArtifact[] = []
  for (let index = 0; index < input.folded.length; index++) {
    const artifact = input.folded[index]!
    const retention = classes[artifact.class]
    retention.seen++
    if (inCheckpoint[index]) retention.keptInCheckpoint++
    if (inCheckpoint[index] || inRest[index]) retention.kept++
    else {
      dropped.push({
        class: artifact.class,
        text: artifact.text,
        seq: artifact.seq,
        firstSeq: artifact.firstSeq,
        origin: artifact.origin,
        mentions: artifact.mentions,
        recoverable: artifact.class === 'path' || artifact.class === 'url',
      })
    }
  }
  const vanished: VanishedArtifact[] = []
  for (const [offset, artifact] of previous.entries()) {
    const index = input.folded.length + offset
    if (!inCheckpoint[index] && !inRest[index])
      vanished.push({ class: artifact.class, text: artifact.text, mentions: artifact.mentions })
  }

  const compareDropped = (a: DroppedArtifact, b: DroppedArtifact): number =>
    Number(b.origin === 'user') - Number(a.origin === 'user') ||
    b.seq - a.seq ||
    b.mentions - a.mentions ||
    a.firstSeq - b.firstSeq ||
    byText(a, b)
  const compareVanished = (a: VanishedArtifact, b: VanishedArtifact): number => b.mentions - a.mentions || byText(a, b)
  return {
    classes,
    dropped: rankRoundRobin(dropped, compareDropped, maxDropped),
    droppedTotal: dropped.length,
    previousCheckpointArtifacts: previous.length,
    vanishedFromPreviousCheckpoint: rankRoundRobin(vanished, compareVanished, maxDropped),
    vanishedTotal: vanished.length,
    health: checkpointHealth(input.checkpointText, input),
    heldInCheckpoint: heldArtifacts(all, inCheckpoint),
  }
}
