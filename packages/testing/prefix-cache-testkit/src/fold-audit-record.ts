import type { CompactionAuditData } from '@warmfold/compaction'
import type { ContentBlock, Message } from '@warmfold/llm'
import type { AnySessionEvent, Session } from '@warmfold/session'
import type { PlantedArtifact, PlantedClass } from './coding-workload.ts'
import { foldBrackets } from './fold-stalls.ts'
import { plantedIn } from './lossy-summary.ts'

/** The audit's payload types, for hosts of the test kit that read them (the bench, the report). */
export type { AuditDroppedItem, AuditTrail, CompactionAuditData } from '@warmfold/compaction'

/** The classes the simulator keeps a record of. */
export const PLANTED_CLASSES: readonly PlantedClass[] = ['path', 'command', 'error']

/** Per class: artifacts the fold's region held, and those still there after the fold. */
export type PlantedSurvival = Record<PlantedClass, { seen: number; kept: number }>

/** One committed fold of a coding run, seen by the simulator and by the fold audit. */
export interface FoldAuditRecord {
  readonly compactionId: string
  /** The `compaction/audit` event's payload. */
  readonly audit: CompactionAuditData
  /** What the simulator planted in the region, and what of it the summary alone kept (verbatim in the model's text). */
  readonly summaryAlone: PlantedSurvival
  /** What of it the checkpoint kept (summary and artifact trail). */
  readonly withCheckpoint: PlantedSurvival
  /**
   * The simulator's record: planted artifacts the checkpoint does not hold (every planted artifact is the step's own,
   * so nothing after the fold holds them either).
   */
  readonly lost: readonly PlantedArtifact[]
  /** The audit's dropped items of the planted classes that the simulator's record has too. */
  readonly agreed: number
  /** The audit's dropped items of the planted classes. */
  readonly auditDropped: number
}

const normalize = (text: string): string => text.replace(/\s+/g, ' ')
const WORD = /[A-Za-z0-9_]/

/**
 * Whether `text` holds `artifact` as a whole: a word character at either end of the artifact
 * must not continue into a neighbour (`packages/app-1` is not in `packages/app-11`), as the
 * audit's matcher counts it.
 */
export function holdsVerbatim(text: string, artifact: string): boolean {
  for (let at = text.indexOf(artifact); at >= 0; at = text.indexOf(artifact, at + 1)) {
    const before = at > 0 && WORD.test(artifact[0]!) && WORD.test(text[at - 1]!)
    const end = at + artifact.length
    const after = end < text.length && WORD.test(artifact.at(-1)!) && WORD.test(text[end]!)
    if (!before && !after) return true
  }
  return false
}
const textOf = (blocks: readonly ContentBlock[]): string =>
  blocks.map((block) => (block.type === 'text' ? block.text : '')).join('\n')
/** The message the event at `seq` logged. */
function messageAt(events: readonly AnySessionEvent[], seq: number): Message {
  const message = (events[seq]?.data as { message?: Message } | undefined)?.message
  if (message === undefined) throw new Error(`foldAuditRecords: the event at seq ${seq} holds no message`)
  return message
}

const key = (artifact: { readonly class: string; readonly text: string }): string =>
  `${artifact.class}\u0000${artifact.text}`

function survival(planted: readonly PlantedArtifact[], text: string): PlantedSurvival {
  const result = Object.fromEntries(PLANTED_CLASSES.map((name) => [name, { seen: 0, kept: 0 }])) as PlantedSurvival
  for (const artifact of planted) {
    result[artifact.class].seen++
    if (holdsVerbatim(text, artifact.text)) result[artifact.class].kept++
  }
  return result
}

/**
 * For every committed fold of a coding-workload session with a `compaction/audit`: what the
 * simulator planted in the fold's region (the artifacts of the tool steps and corrections it
 * shadows), what the summary alone and the checkpoint kept of it (a plain substring search for
 * each planted text: the simulator's own record, independent of the audit's extraction), and how
 * the audit's dropped list compares with that record. Set `audit.maxDropped` high enough for
 * the dropped list to be complete (the bench does).
 */
export function foldAuditRecords(
  session: Session,
  options: { readonly readChars: number; readonly turns: number },
): FoldAuditRecord[] {
  const events = session.events
  const records: FoldAuditRecord[] = []
  for (const event of events) {
    if (event.type !== 'compaction/audit') continue
    const audit = event.data as CompactionAuditData
    const summary = events.find(
      (candidate) =>
        candidate.type === 'compaction/summary' &&
        (candidate.data as { compactionId: string }).compactionId === audit.compactionId,
    )
    if (!summary)
      throw new Error(
        `foldAuditRecords: compaction/audit at seq ${event.seq} has no compaction/summary for ${audit.compactionId}`,
      )
    const data = summary.data as { shadowedSeqs: number[]; summary: ContentBlock[] }
    const region = data.shadowedSeqs.map((seq) => messageAt(events, seq))
    const planted = [
      ...new Map(
        plantedIn(region, options.readChars, options.turns).map((artifact) => [key(artifact), artifact]),
      ).values(),
    ]
    const checkpoint = normalize(textOf(messageAt(events, summary.seq + 1).content))
    const modelText = normalize(textOf(data.summary))
    const lost = planted.filter((artifact) => !holdsVerbatim(checkpoint, artifact.text))
    const lostKeys = new Set(lost.map(key))
    const dropped = audit.dropped.filter((item) => (PLANTED_CLASSES as readonly string[]).includes(item.class))
    records.push({
      compactionId: audit.compactionId,
      audit,
      summaryAlone: survival(planted, modelText),
      withCheckpoint: survival(planted, checkpoint),
      lost,
      agreed: dropped.filter((item) => lostKeys.has(key(item))).length,
      auditDropped: dropped.length,
    })
  }
  return records
}

/**
 * The audit of each summary call of a session, in the order the calls were sent: a committed
 * fold's last call carries its `compaction/audit`, every other call (an earlier attempt, a
 * discarded or refused fold) `null`. Brackets take their calls in the order they opened, as
 * many as they logged attempts.
 */
export function summaryCallAudits(events: readonly AnySessionEvent[]): (CompactionAuditData | null)[] {
  return foldBrackets(events).flatMap((bracket) =>
    Array.from({ length: bracket.calls }, (_, index) => (index === bracket.calls - 1 ? bracket.audit : null)),
  )
}
