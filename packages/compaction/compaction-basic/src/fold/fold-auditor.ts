import type { CompactionAuditData } from '@warmfold/compaction'
import { isCheckpointMessage } from '@warmfold/compaction'
import type { ArtifactExtraction, ArtifactTrail, HeldArtifact, LoggedMessage } from '@warmfold/fold-audit'
import { auditFold, buildArtifactTrail, heldArtifactList } from '@warmfold/fold-audit'
import type { Message } from '@warmfold/llm'
import type { Session } from '@warmfold/session'
import type { TokenMeter } from '@warmfold/token-meter'
import { checkpointSummaryOf, COMPACTION_INSTRUCTION } from './compaction-instruction.ts'
import type { ResolvedFoldAudit } from '../config/fold-audit-config.ts'
import type { SummaryOutcome } from './summarize.ts'

/** What `estimateSystem` adds to a text's own tokens (the token meter's per-part overhead). */
const SYSTEM_OVERHEAD_TOKENS = 4

/** The largest share of a fold's replaced tokens the artifact trail may take. */
export const TRAIL_SHARE_OF_REGION = 0.25

/** The sections the summary instruction asks for, as the audit's health check looks for them. */
export const REQUIRED_SECTIONS: readonly string[] = Object.freeze(
  [...COMPACTION_INSTRUCTION.matchAll(/^## (.+)$/gm)].map((match) => match[1]!),
)

/** The checkpoint a fold replaces. */
interface PreviousCheckpoint {
  readonly seq: number
  readonly message: Message
  /** Its summary and trail, without the frame. */
  readonly summary: string
}

/** The artifacts of the previous checkpoint the audit compares, and where they come from. */
interface PreviousArtifacts {
  readonly artifacts: readonly HeldArtifact[]
  readonly from: 'audit' | 'text'
}

/**
 * The `heldInCheckpoint` list of the audit logged with the checkpoint at `checkpointSeq` (the
 * engine logs the summary right before the checkpoint and the audit of the same compaction
 * after it, past the `compaction/after` messages, in one unit), or `undefined` when there is
 * none or it is not a list of artifacts.
 */
function loggedHeldArtifacts(session: Session, checkpointSeq: number): readonly HeldArtifact[] | undefined {
  const summary = session.eventAt(checkpointSeq - 1)
  if (summary?.type !== 'compaction/summary') return undefined
  for (let seq = checkpointSeq + 1; ; seq++) {
    const event = session.eventAt(seq)
    if (event?.type === 'user/message') continue
    if (event?.type !== 'compaction/audit' || event.data.compactionId !== summary.data.compactionId) return undefined
    const held = (event.data as { heldInCheckpoint?: unknown }).heldInCheckpoint
    if (held === undefined) return undefined
    try {
      return heldArtifactList(held)
    } catch {
      // Not a list the engine writes (a log edited by hand): the text is read, and the audit says so
      // (`previousCheckpointArtifactsFrom: 'text'`).
      return undefined
    }
  }
}

/**
 * The audit side of one fold (part of *how* to fold: the fold transaction owns one): the
 * artifacts of the region, read once from the log; the artifact trail appended to the
 * checkpoint text; and the `compaction/audit` payload once the checkpoint is known. Pure
 * functions of the log and the summary, so a background fold's trail is the same bytes at
 * every check.
 */
export class FoldAuditor {
  private extractionCache?: ArtifactExtraction
  /** The checkpoint this fold replaces (the region's first message, when it is one), with its summary and trail. */
  private readonly previous?: PreviousCheckpoint
  private readonly trails = new Map<string, ArtifactTrail>()
  /** Lines the `compaction/after` listeners added to the trail. */
  readonly hostEntries: string[] = []

  /** The trail's budget is in the token meter's units, like every other price of the engine. */
  private readonly estimateTokens: (text: string) => number

  constructor(
    /** The engine's token meter (a bridge passes the same estimate without cordis). */
    meter: Pick<TokenMeter, 'estimateSystem'>,
    private readonly session: Session,
    private readonly regionSeqs: readonly number[],
    readonly settings: ResolvedFoldAudit,
    /** Tokens the checkpoint replaces now (the carry is planned again whenever the log has grown). */
    private readonly shadowedTokens: () => number,
  ) {
    this.estimateTokens = (text) => (text === '' ? 0 : meter.estimateSystem(text) - SYSTEM_OVERHEAD_TOKENS)
    const seq = regionSeqs[0]
    const leading =
      seq === undefined ? undefined : (session.eventAt(seq)?.data as { message?: Message } | undefined)?.message
    if (seq !== undefined && leading !== undefined && isCheckpointMessage(leading))
      this.previous = { seq, message: leading, summary: checkpointSummaryOf(leading) }
  }

  /**
   * The region's messages with their seqs, in log order: the surface order differs from it
   * after a fold (the checkpoint's seq is newer than the tail it kept) or a prune (a rewritten
   * result has a new seq), and the extraction's first and newest mentions are log times.
   */
  private regionMessages(): LoggedMessage[] {
    return this.regionSeqs
      .toSorted((a, b) => a - b)
      .map((seq) => ({ seq, message: (this.session.eventAt(seq)!.data as { message: Message }).message }))
  }

  /**
   * The artifacts of `previous` that this fold's audit compares: what the audit of the fold that
   * wrote it found the checkpoint holds (`heldInCheckpoint`, logged after it in the same unit),
   * so no fold reads the checkpoint it replaces; or, when that fold logged no such list (its
   * audit was off, a log from before the list, a list that is not one), the artifacts of the
   * checkpoint's text, read now.
   */
  private previousArtifacts(previous: PreviousCheckpoint): PreviousArtifacts {
    const logged = loggedHeldArtifacts(this.session, previous.seq)
    return logged !== undefined
      ? { artifacts: logged, from: 'audit' }
      : { artifacts: this.settings.extractor.readCheckpoint(previous.message, previous.summary), from: 'text' }
  }

  private extraction(): ArtifactExtraction {
    this.extractionCache ??= this.settings.extractor.extract(this.regionMessages())
    return this.extractionCache
  }

  /**
   * The trail's budget at this fold: `artifactTrail.maxTokens`, but never more than
   * {@link TRAIL_SHARE_OF_REGION} of what the checkpoint replaces, so the trail cannot keep a
   * small fold from shrinking the history.
   */
  budget(): number {
    return Math.max(
      1,
      Math.min(this.settings.trail.maxTokens, Math.floor(this.shadowedTokens() * TRAIL_SHARE_OF_REGION)),
    )
  }

  /** The trail with the host's entries so far; `undefined` when `artifactTrail.enabled` is false. */
  trail(): ArtifactTrail | undefined {
    if (!this.settings.trail.enabled) return undefined
    const maxTokens = this.budget()
    const key = `${maxTokens}\n${this.hostEntries.join('\n')}`
    let trail = this.trails.get(key)
    if (trail === undefined) {
      trail = buildArtifactTrail(this.extraction(), {
        maxTokens,
        estimateTokens: this.estimateTokens,
        hostEntries: this.hostEntries,
        carryFrom: this.previous?.summary,
      })
      this.trails.set(key, trail)
    }
    return trail
  }

  /** The summary as the checkpoint holds it: the model's text, then the trail (when it has something to say). */
  checkpointSummary(summary: string): string {
    const trail = this.trail()?.text ?? ''
    return trail === '' ? summary : `${summary.trim()}\n\n${trail}`
  }

  /**
   * Adds a host line to the trail (the `compaction/after` hook's `addTrailEntry`).
   * @throws TypeError for text that is empty or spans several lines.
   */
  addHostEntry(text: unknown, compactionId: string): void {
    if (typeof text !== 'string' || text.trim() === '' || /[\r\n]/.test(text)) {
      throw new TypeError(
        `compaction/after (compaction ${compactionId}): addTrailEntry needs one non-empty line of text, got ` +
          `${JSON.stringify(text) ?? String(text)}`,
      )
    }
    this.hostEntries.push(text.trim())
  }

  /**
   * The `compaction/audit` payload, or `undefined` when `audit.enabled` is false.
   * @param projected The request's messages once the fold is committed, the checkpoint at `checkpointAt`.
   * @param appended The `compaction/after` listeners' messages, which come after all of them.
   */
  audit(
    compactionId: string,
    outcome: SummaryOutcome,
    projected: readonly Message[],
    checkpointAt: number,
    appended: readonly Message[],
  ): CompactionAuditData | undefined {
    if (!this.settings.audit.enabled) return undefined
    const checkpointText = this.checkpointSummary(outcome.text)
    const visibleAfter = [...projected.slice(0, checkpointAt), ...projected.slice(checkpointAt + 1), ...appended]
    const previous = this.previous
    const compared = previous === undefined ? undefined : this.previousArtifacts(previous)
    const trail = this.trail()
    const audit = auditFold({
      folded: this.extraction().artifacts,
      checkpointText,
      visibleAfter,
      requiredSections: REQUIRED_SECTIONS,
      maxDropped: this.settings.audit.maxDropped,
      writtenInCheckpoint: trail?.written,
      previousCheckpoint: previous?.summary,
      previousCheckpointArtifacts: compared?.artifacts,
      finishReason: outcome.result.finishReason,
      extraction: this.settings.audit,
    })
    return {
      compactionId,
      ...audit,
      ...(compared === undefined ? {} : { previousCheckpointArtifactsFrom: compared.from }),
      trail:
        trail === undefined
          ? null
          : {
              maxTokens: this.budget(),
              tokens: trail.tokens,
              kept: trail.kept,
              cut: trail.cut,
              carried: trail.carried,
            },
    }
  }
}
