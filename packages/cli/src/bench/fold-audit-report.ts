import type {
  AuditDroppedItem,
  AuditTrail,
  CompactionAuditData,
  PlantedClass,
  WorkloadRun,
} from '@warmfold/prefix-cache-testkit'
import { foldAuditRecords, PLANTED_CLASSES } from '@warmfold/prefix-cache-testkit'

/**
 * A summary call's fold audit in the bench report: per class what the region held and what the model still reads, and
 * what was dropped.
 */
export interface SummaryCallAudit {
  classes: Record<string, { seen: number; kept: number }>
  /** Every dropped item (the bench lists them all), ranked as the audit ranks them. */
  dropped: AuditDroppedItem[]
  droppedTotal: number
  /** The artifact trail's budget use, or null with the trail off. */
  trail: AuditTrail | null
}

/** Survival of one planted class over a run's folds. */
export interface ClassSurvival {
  seen: number
  /** With the checkpoint the model reads (the summary and, when on, the artifact trail), as the audit measured it. */
  kept: number
  /** What the lossy summary alone kept (the simulator's substring check of the model's text). */
  keptBySummary: number
}

/**
 * The coding workload's fold audit in the bench report: survival per planted class with the
 * checkpoint and by the summary alone, and how the audit's dropped lists compare with the
 * simulator's record of what each fold lost (precision and recall over every fold).
 */
export interface FoldAuditReport {
  folds: number
  classes: Record<PlantedClass, ClassSurvival>
  /** Dropped items of the planted classes the audit listed, and those the simulator's record has too. */
  auditDropped: number
  simulatorLost: number
  agreed: number
  /** agreed / auditDropped (1 when the audit listed none). */
  precision: number
  /** agreed / simulatorLost (1 when the simulator recorded none). */
  recall: number
  /** The largest artifact trail of the run, in tokens, and its budget; null with the trail off. */
  trail: { maxTokens: number; largestTokens: number } | null
}

/** A `compaction/audit` payload as the bench reports it, or null. */
export function summaryCallAudit(audit: CompactionAuditData | null): SummaryCallAudit | null {
  if (audit === null) return null
  return {
    classes: Object.fromEntries(
      Object.entries(audit.classes).map(([name, retention]) => [name, { seen: retention.seen, kept: retention.kept }]),
    ),
    dropped: [...audit.dropped],
    droppedTotal: audit.droppedTotal,
    trail: audit.trail,
  }
}

/** The fold audit of a coding-workload run against the simulator's record. */
export function foldAuditReport(run: WorkloadRun): FoldAuditReport {
  const records = foldAuditRecords(run.session, { readChars: run.workload.resultChars, turns: run.workload.turns })
  const classes = Object.fromEntries(
    PLANTED_CLASSES.map((name) => [name, { seen: 0, kept: 0, keptBySummary: 0 }]),
  ) as Record<PlantedClass, ClassSurvival>
  let trail = null as FoldAuditReport['trail']
  for (const record of records) {
    for (const name of PLANTED_CLASSES) {
      classes[name].seen += record.audit.classes[name]?.seen ?? 0
      classes[name].kept += record.audit.classes[name]?.kept ?? 0
      classes[name].keptBySummary += record.summaryAlone[name].kept
    }
    if (record.audit.trail)
      trail = {
        maxTokens: record.audit.trail.maxTokens,
        largestTokens: Math.max(trail?.largestTokens ?? 0, record.audit.trail.tokens),
      }
  }
  const auditDropped = records.reduce((sum, record) => sum + record.auditDropped, 0)
  const simulatorLost = records.reduce((sum, record) => sum + record.lost.length, 0)
  const agreed = records.reduce((sum, record) => sum + record.agreed, 0)
  return {
    folds: records.length,
    classes,
    auditDropped,
    simulatorLost,
    agreed,
    precision: auditDropped === 0 ? 1 : agreed / auditDropped,
    recall: simulatorLost === 0 ? 1 : agreed / simulatorLost,
    trail,
  }
}
