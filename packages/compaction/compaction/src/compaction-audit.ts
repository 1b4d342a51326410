/**
 * The payload of `compaction/audit`: what literal information a committed fold kept and dropped,
 * checked without a model. Declared here structurally (plain JSON) so the contract does not
 * depend on the package that computes it (`@warmfold/fold-audit`'s `FoldAudit` fits it).
 */

/** Retention of one artifact class (`path`, `command`, `error`, `identifier`, `number`, `url`, `user-message`). */
export interface AuditClassRetention {
  /** Distinct artifacts of the class in the folded region. */
  readonly seen: number
  /** Those the model still reads verbatim after the fold (checkpoint, carried messages, retained tail). */
  readonly kept: number
  /** Those found in the checkpoint text itself (a subset of `kept`). */
  readonly keptInCheckpoint: number
}

/** An artifact of the folded region that nothing the model reads after the fold holds. */
export interface AuditDroppedItem {
  readonly class: string
  /** The artifact as normalized for the check (see `@warmfold/fold-audit`). */
  readonly text: string
  /** Seq of the newest message that mentioned it. */
  readonly seq: number
  /** Seq of the first message that mentioned it. */
  readonly firstSeq: number
  /** Who put it into the conversation: `user`, `tool` or `assistant`. */
  readonly origin: 'user' | 'tool' | 'assistant'
  readonly mentions: number
  /** `true` for what can be looked up again (a path, a URL). */
  readonly recoverable: boolean
}

/** What the engine's artifact trail did at this fold. */
export interface AuditTrail {
  /** Its token budget at this fold: `artifactTrail.maxTokens`, at most a quarter of the tokens the fold replaced. */
  readonly maxTokens: number
  /** Tokens of the trail appended to the checkpoint text (0 when it had nothing to say). */
  readonly tokens: number
  /**
   * Entries written, per section (`filesChanged`, `filesRead`, `commands`, `openProblems`, `userConstraints`,
   * `hostEntries`).
   */
  readonly kept: Readonly<Record<string, number>>
  /** Entries the budget left out, per section. */
  readonly cut: Readonly<Record<string, number>>
  /**
   * Entries taken from the trail of the checkpoint this fold replaced, kept or cut (absent in logs
   * written before the trail carried entries).
   */
  readonly carried?: number
}

/** Payload of `compaction/audit`. */
export interface CompactionAuditData {
  readonly compactionId: string
  /** Per artifact class, every class present (zeros included). */
  readonly classes: Readonly<Record<string, AuditClassRetention>>
  /** The most important dropped artifacts, ranked and bounded (`audit.maxDropped`). */
  readonly dropped: readonly AuditDroppedItem[]
  /** Every dropped artifact, the listed ones included. */
  readonly droppedTotal: number
  /**
   * Artifacts of the checkpoint this fold replaced that were compared (0 without one); see
   * `previousCheckpointArtifactsFrom`.
   */
  readonly previousCheckpointArtifacts: number
  /** Artifacts of the previous checkpoint that nothing visible holds now, bounded like `dropped`. */
  readonly vanishedFromPreviousCheckpoint: readonly {
    readonly class: string
    readonly text: string
    readonly mentions: number
  }[]
  readonly vanishedTotal: number
  /**
   * Whether the summary has every section its instruction asks for, was not cut off, and
   * its size next to the previous checkpoint.
   */
  readonly health: {
    readonly sectionsPresent: readonly string[]
    readonly sectionsMissing: readonly string[]
    readonly sectionsEmpty: readonly string[]
    readonly truncated: boolean | null
    readonly characters: number
    readonly previousCharacters: number | null
    readonly sizeRatioToPrevious: number | null
  }
  /** The artifact trail appended to the checkpoint, `null` when `artifactTrail.enabled` is false. */
  readonly trail: AuditTrail | null
  /**
   * What the new checkpoint's text holds of the artifacts compared (the folded region's and the
   * previous checkpoint's): per class, each text with its mentions (`{ path: { 'src/a.ts': 3 } }`).
   * The next fold compares these as this checkpoint's artifacts instead of reading its text.
   * Absent in logs written before it was added.
   */
  readonly heldInCheckpoint?: Readonly<Record<string, Readonly<Record<string, number>>>>
  /**
   * Where `previousCheckpointArtifacts` (and so `vanishedFromPreviousCheckpoint`) came from:
   * `audit`, the `heldInCheckpoint` of the fold that wrote that checkpoint; `text`, its text,
   * read (that fold logged no list). Absent without a previous checkpoint, and in older logs.
   */
  readonly previousCheckpointArtifactsFrom?: 'audit' | 'text'
}

declare module '@warmfold/session' {
  interface SessionEventMap {
    /**
     * The audit of a committed fold (log-only): per artifact class what the folded region held
     * and what the model still reads, the dropped items, what of the previous checkpoint
     * vanished, the summary's health and the artifact trail's budget use. Written inside the
     * fold's unit, after its checkpoint (and the `compaction/after` messages), once per
     * compaction.
     */
    'compaction/audit': CompactionAuditData
  }
}
