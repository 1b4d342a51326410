import { RunError } from '../shared/run-error.ts'
import { fieldError } from './field-error.ts'
import type { ReportFork, ReportLineage } from './report-model.ts'

/** The answer as the report shows it: the first 120 characters. */
const ANSWER_CHARS = 120

/**
 * Folds a parent's `agent/fork-start` and `agent/fork-end` events (`@warmfold/agent-loop` logs one end per start)
 * into one row per child session.
 * @throws RunError naming `where` and the field when an event is not what the agent loop logs.
 */
export function addForkEvent(
  forks: ReportFork[],
  type: string,
  data: Record<string, unknown>,
  line: number,
  afterRequest: number,
  where: string,
): void {
  const child = data.childSessionId
  if (typeof child !== 'string' || child === '')
    throw fieldError(where, `${type} childSessionId`, 'a non-empty string', child)
  if (type === 'agent/fork-start') {
    forks.push({
      line,
      afterRequest,
      childSessionId: child,
      outcome: 'open',
      text: 'no agent/fork-end logged (the fork was running when the log was read)',
    })
    return
  }
  const fork = forks.findLast((row) => row.childSessionId === child && row.outcome === 'open')
  if (!fork) throw new RunError(`${where}: ${type} names fork ${child}, which has no agent/fork-start before it`)
  const { reason, answer, error } = data
  if (reason === 'finished' && typeof answer === 'string') {
    forks[forks.indexOf(fork)] = {
      ...fork,
      outcome: 'finished',
      text: answer.length > ANSWER_CHARS ? `${answer.slice(0, ANSWER_CHARS)}…` : answer,
    }
  } else if (reason === 'failed' && typeof error === 'string') {
    forks[forks.indexOf(fork)] = { ...fork, outcome: 'failed', text: error }
  } else {
    throw new RunError(
      `${where}: ${type} must be { reason: 'finished', answer } or { reason: 'failed', error }, got ` +
        `${JSON.stringify(data)}`,
    )
  }
}

/**
 * The parent a fork's log names on its `agent/fork` event.
 * @throws RunError naming `where` when the fields are not what the agent loop logs.
 */
export function readLineage(data: Record<string, unknown>, where: string): ReportLineage {
  const { parentSessionId, parentSeq } = data
  if (typeof parentSessionId !== 'string' || !Number.isInteger(parentSeq))
    throw new RunError(
      `${where}: agent/fork must name parentSessionId and an integer parentSeq, got ` +
        `${JSON.stringify({ parentSessionId, parentSeq })}`,
    )
  return { parentSessionId, parentLine: (parentSeq as number) + 1 }
}

/** One line of the text report for a fork. */
export function forkText(fork: ReportFork): string {
  return `${fork.childSessionId}: ${fork.outcome}${fork.outcome === 'open' ? '' : `: ${fork.text}`}`
}
