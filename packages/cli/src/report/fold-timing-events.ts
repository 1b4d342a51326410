import { RunError } from '../shared/run-error.ts'
import type { NumbersOf } from './field-error.ts'
import { fieldError, numberField, objectField } from './field-error.ts'
import type { ReportFoldTiming } from './report-model.ts'
import { seconds } from './report-format.ts'

const MODES = ['sync', 'background']
const AT_THRESHOLD = ['none', 'pending', 'ready']
const TIMES = ['startedAt', 'readyAfterMs', 'waitedMs', 'stallSavedMs', 'postSwapPrefillTokens'] as const

/**
 * The timing of a `compaction/end` that carries one (engines that measure it), as the report
 * shows it: how long the summary took, what the conversation waited for it, and for a discarded
 * background fold why it was thrown away. Undefined when the event has no `timing`.
 * @throws RunError naming `where` and the field when `timing` or `discarded` is not what the engine logs.
 */
export function readFoldTiming(
  data: Record<string, unknown>,
  where: string,
): Omit<ReportFoldTiming, 'line' | 'afterRequest'> | undefined {
  const { timing, discarded, compactionId, error, attempts } = data
  if (timing === undefined) return undefined
  const fields = objectField(where, 'compaction/end timing', timing)
  const oneOf = (key: string, values: readonly string[]): string => {
    const value = fields[key]
    if (typeof value !== 'string' || !values.includes(value))
      throw fieldError(where, `compaction/end timing.${key}`, `one of ${values.join(', ')}`, value)
    return value
  }
  const mode = oneOf('mode', MODES) as ReportFoldTiming['mode']
  const statusAtThreshold = oneOf('statusAtThreshold', AT_THRESHOLD) as ReportFoldTiming['statusAtThreshold']
  const [, readyAfterMs, waitedMs, stallSavedMs, postSwapPrefillTokens] = TIMES.map((key) =>
    numberField(where, `compaction/end timing.${key}`, fields[key]),
  ) as NumbersOf<typeof TIMES>
  return {
    compactionId: typeof compactionId === 'string' ? compactionId : '',
    mode,
    statusAtThreshold,
    readyAfterMs,
    waitedMs,
    stallSavedMs,
    postSwapPrefillTokens,
    discarded: readDiscarded(discarded, where),
    summary: summaryState(error, discarded, attempts),
  }
}

/**
 * Whether the fold's summary call answered: a fold without `error` committed its summary; one that
 * ended with an error had it in hand only when its last call finished (a stale or superseded fold),
 * not when the discard aborted the call or the call failed or was refused.
 */
function summaryState(error: unknown, discarded: unknown, attempts: unknown): ReportFoldTiming['summary'] {
  if (error === undefined) return 'in-hand'
  const last = Array.isArray(attempts) ? (attempts.at(-1) as { finishReason?: unknown } | undefined) : undefined
  if (last?.finishReason === 'aborted') return 'aborted'
  const reason = (discarded as { reason?: unknown } | undefined)?.reason
  if (discarded === undefined || last?.finishReason === 'error' || reason === 'failed' || reason === 'refused')
    return 'failed'
  return 'in-hand'
}

/** What became of the summary and when, in words: `summary in hand after 3.1 s`, `summary call aborted after 0.4 s`. */
export function summaryStateText(fold: Pick<ReportFoldTiming, 'summary' | 'readyAfterMs'>): string {
  const after = seconds(fold.readyAfterMs)
  if (fold.summary === 'aborted') return `summary call aborted after ${after}`
  if (fold.summary === 'failed') return `no summary (the call failed or was refused) after ${after}`
  return `summary in hand after ${after}`
}

function readDiscarded(discarded: unknown, where: string): ReportFoldTiming['discarded'] {
  if (discarded === undefined) return null
  const { reason, detail } = (discarded ?? {}) as Record<string, unknown>
  if (typeof reason !== 'string' || typeof detail !== 'string')
    throw new RunError(
      `${where}: compaction/end discarded must have a string reason and detail, got ${JSON.stringify(discarded)}`,
    )
  return { reason, detail }
}

/** One line of the text report for a fold's timing. */
export function foldTimingText(fold: ReportFoldTiming): string {
  const wait = `${summaryStateText(fold)}, the conversation waited ${seconds(fold.waitedMs)}`
  const hidden =
    fold.mode === 'background'
      ? ` (${seconds(fold.stallSavedMs)} hidden; at the threshold: ${fold.statusAtThreshold})`
      : ''
  const after = fold.discarded
    ? `; discarded (${fold.discarded.reason}): ${fold.discarded.detail}`
    : `; the request after the swap prefills about ${fold.postSwapPrefillTokens.toLocaleString('en-US')} new tokens`
  return `${fold.mode}: ${wait}${hidden}${after}`
}
