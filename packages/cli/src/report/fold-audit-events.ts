import type { LoggedMessage } from '@warmfold/fold-audit'
import { afterFoldBehaviour } from '@warmfold/fold-audit'
import type { Message } from '@warmfold/llm'
import type { AnySessionEvent } from '@warmfold/session'
import { RunError } from '../shared/run-error.ts'
import { escapeHtml } from './escape-html.ts'
import { fieldError, objectField } from './field-error.ts'
import { loggedSection } from './html-table.ts'
import type { ReportFoldAudit } from './report-model.ts'

/** Dropped items a fold shows at most (the event's own bound applies first; `droppedTotal` counts all). */
const SHOWN_DROPPED = 10

const MESSAGE_EVENTS: ReadonlySet<string> = new Set(['user/message', 'assistant/message', 'tool/result'])

function count(value: unknown, field: string, where: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0)
    throw fieldError(where, `compaction/audit ${field}`, 'an integer ≥ 0', value)
  return value
}

/**
 * A `compaction/audit` event as the report shows it, with the agent's behaviour after the fold
 * (re-reads of what the folded region already read, loops, steps to the first write; see
 * `afterFoldBehaviour`), measured on the messages `events` logged around it.
 * @throws RunError naming `where` and the field when the event is not what the engine logs.
 */
export function readFoldAudit(
  events: readonly AnySessionEvent[],
  seq: number,
  where: string,
): Omit<ReportFoldAudit, 'line' | 'afterRequest'> {
  const data = events[seq]!.data as unknown as Record<string, unknown>
  const { compactionId, classes, dropped, droppedTotal, trail } = data
  if (typeof compactionId !== 'string')
    throw fieldError(where, 'compaction/audit compactionId', 'a string', compactionId)
  const retentions = objectField(where, 'compaction/audit classes', classes)
  if (!Array.isArray(dropped)) throw fieldError(where, 'compaction/audit dropped', 'an array', dropped)
  const survival = Object.entries(retentions as Record<string, { seen?: unknown; kept?: unknown }>).map(
    ([name, retention]) => ({
      class: name,
      seen: count(retention?.seen, `classes.${name}.seen`, where),
      kept: count(retention?.kept, `classes.${name}.kept`, where),
    }),
  )
  const items = dropped
    .slice(0, SHOWN_DROPPED)
    .map((item: { class?: unknown; text?: unknown; seq?: unknown; origin?: unknown }, index) => {
      if (typeof item?.class !== 'string' || typeof item.text !== 'string' || typeof item.origin !== 'string')
        throw new RunError(
          `${where}: compaction/audit dropped[${index}] must have a string class, text and origin, got ` +
            `${JSON.stringify(item)}`,
        )
      return {
        class: item.class,
        text: item.text,
        seq: count(item.seq, `dropped[${index}].seq`, where),
        origin: item.origin,
      }
    })
  const trailData = trail as { tokens?: unknown; maxTokens?: unknown } | null | undefined
  return {
    compactionId,
    classes: survival.filter((entry) => entry.seen > 0),
    dropped: items,
    droppedTotal: count(droppedTotal, 'droppedTotal', where),
    trail:
      trailData === null || trailData === undefined
        ? null
        : {
            tokens: count(trailData.tokens, 'trail.tokens', where),
            maxTokens: count(trailData.maxTokens, 'trail.maxTokens', where),
          },
    rework: rework(events, seq, compactionId),
  }
}

/** The messages of `events` with seqs in `[from, to)`, in log order. */
function messagesBetween(
  events: readonly AnySessionEvent[],
  from: number,
  to: number,
  keep: (seq: number) => boolean = () => true,
): LoggedMessage[] {
  const messages: LoggedMessage[] = []
  for (let seq = Math.max(0, from); seq < Math.min(to, events.length); seq++) {
    const event = events[seq]!
    if (MESSAGE_EVENTS.has(event.type) && keep(seq))
      messages.push({ seq, message: (event.data as { message: Message }).message })
  }
  return messages
}

/** The behaviour after the fold whose audit is at `auditSeq`, or null when its summary is not found. */
function rework(events: readonly AnySessionEvent[], auditSeq: number, compactionId: string): ReportFoldAudit['rework'] {
  let summarySeq = -1
  const shadowedBefore = new Set<number>()
  for (let seq = 0; seq < auditSeq; seq++) {
    const event = events[seq]!
    if (event.type !== 'compaction/summary') continue
    const data = event.data as { compactionId?: string; shadowedSeqs?: number[] }
    for (const shadowed of data.shadowedSeqs ?? []) shadowedBefore.add(shadowed)
    if (data.compactionId === compactionId) summarySeq = seq
  }
  if (summarySeq < 0) return null
  const folded = new Set((events[summarySeq]!.data as { shadowedSeqs: number[] }).shadowedSeqs)
  const end = events.findIndex((event, seq) => seq > auditSeq && event.type === 'compaction/end')
  const nextStart = events.findIndex((event, seq) => seq > auditSeq && event.type === 'compaction/start')
  const behaviour = afterFoldBehaviour({
    folded: messagesBetween(events, 0, summarySeq, (seq) => folded.has(seq)),
    beforeFold: messagesBetween(events, 0, summarySeq),
    retained: messagesBetween(events, 0, summarySeq, (seq) => !shadowedBefore.has(seq)),
    after: messagesBetween(events, end < 0 ? auditSeq + 1 : end + 1, nextStart < 0 ? events.length : nextStart),
  })
  return {
    stepsObserved: behaviour.stepsObserved,
    readCalls: behaviour.readCalls,
    repeatedReads: behaviour.repeatedReads.length,
    netReworkCalls: behaviour.netReworkCalls,
    loops: behaviour.loops.length,
    stepsToFirstWrite: behaviour.stepsToFirstWrite,
  }
}

const percent = (kept: number, seen: number): string => `${Math.round((kept / seen) * 100)}%`

/** Survival per class, one phrase. */
function survivalText(audit: ReportFoldAudit): string {
  return audit.classes.map((entry) => `${entry.class} ${entry.kept}/${entry.seen}`).join(', ') || 'nothing to keep'
}

/** What the agent did after the fold, one phrase. */
export function reworkText(audit: ReportFoldAudit): string {
  const behaviour = audit.rework
  if (behaviour === null) return 'no steps after the fold'
  const write =
    behaviour.stepsToFirstWrite === null ? 'no write yet' : `first write at step ${behaviour.stepsToFirstWrite}`
  return (
    `${behaviour.repeatedReads} of ${behaviour.readCalls} reads repeated what the fold held (net ` +
    `${behaviour.netReworkCalls.toFixed(1)}), ${behaviour.loops} loop(s), ${write} (${behaviour.stepsObserved} ` +
    'step(s) seen)'
  )
}

/** One fold's lines of the text report. */
export function foldAuditText(audit: ReportFoldAudit): string[] {
  const trail =
    audit.trail === null ? 'no artifact trail' : `artifact trail ${audit.trail.tokens}/${audit.trail.maxTokens} tokens`
  const lines = [`kept ${survivalText(audit)}; ${trail}; after the fold: ${reworkText(audit)}`]
  if (audit.droppedTotal > 0) {
    const items = audit.dropped.map(
      (item) => `${item.class} ${JSON.stringify(item.text)} (seq ${item.seq}, ${item.origin})`,
    )
    const more = audit.droppedTotal > audit.dropped.length ? '; …' : ''
    lines.push(`dropped ${audit.droppedTotal}: ${items.join('; ')}${more}`)
  }
  return lines
}

/** The HTML section of the fold audits. */
export function foldAuditHtml(audits: readonly ReportFoldAudit[]): string[] {
  return loggedSection(
    'fold-audit',
    'Fold audit',
    'What each fold kept, checked without a model: per class, the artifacts of the folded region (paths, commands, ' +
      "errors, identifiers, numbers, URLs, the user's sentences) the model still reads verbatim after the fold, the " +
      'items it dropped, and what the agent did next (re-reads of what the fold held, loops, steps to its first ' +
      'write).',
    ['kept', 'dropped', 'artifact trail', 'after the fold'],
    audits,
    (audit) => {
      const items = audit.dropped.map(
        (item) =>
          `<li>${escapeHtml(item.class)} <code>${escapeHtml(item.text)}</code> ` +
          `(seq ${item.seq}, ${escapeHtml(item.origin)})</li>`,
      )
      const dropped = audit.droppedTotal === 0 ? 'none' : `${audit.droppedTotal}: <ul>${items.join('')}</ul>`
      const trail = audit.trail === null ? 'off' : `${audit.trail.tokens} of ${audit.trail.maxTokens} tokens`
      const kept =
        audit.classes
          .map((entry) => `${entry.class} ${entry.kept}/${entry.seen} (${percent(entry.kept, entry.seen)})`)
          .join(', ') || 'nothing to keep'
      return [escapeHtml(kept), dropped, trail, escapeHtml(reworkText(audit))]
    },
  )
}
