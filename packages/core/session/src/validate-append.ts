import { canonicalJson, isToolResultMessage } from '@warmfold/llm'
import type { Message } from '@warmfold/llm'
import { SessionError } from './session-error.ts'
import type { SurfaceIntent } from './session-event.ts'
import { isSurfaceEventType } from './session-event.ts'

/** What an append is checked against: the current log length and surface. */
export interface AppendState {
  readonly length: number
  readonly nodes: readonly number[]
}

/**
 * Checks one append against the log rules and returns its data as a detached plain-JSON copy
 * plus its normalized surface intent. Throws `SessionError('INVALID_APPEND')` naming the rule;
 * it never writes anything, so a rejected append leaves the log untouched.
 */
export function validateAppend(
  state: AppendState,
  type: unknown,
  data: unknown,
  intent: unknown,
): { data: unknown; surface?: SurfaceIntent } {
  if (typeof type !== 'string' || type === '')
    fail(`event type must be a non-empty string, got ${JSON.stringify(type)}`)
  const copy = plainCopy(type, data)
  if (!isSurfaceEventType(type)) {
    if (intent !== undefined) fail(`${type} is not a surface event, so it must not carry a surface intent`)
    return { data: copy }
  }
  if (intent === undefined) fail(`${type} is a surface event and needs a surface intent ('append' or a replace)`)
  checkMessage(type, (copy as { message?: unknown }).message)
  return { data: copy, surface: checkIntent(state, type, intent) }
}

function plainCopy(type: string, data: unknown): unknown {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) fail(`${type} data must be a JSON object`)
  try {
    return JSON.parse(canonicalJson(data))
  } catch (error) {
    fail(`${type} data is not plain JSON (${(error as Error).message})`)
  }
}

function checkMessage(type: string, message: unknown): void {
  if (typeof message !== 'object' || message === null) fail(`${type} data.message must be a message object`)
  const candidate = message as Message
  if (typeof candidate.id !== 'string') fail(`${type} data.message.id must be a string`)
  if (!Array.isArray(candidate.content) || candidate.content.length === 0)
    fail(`${type} data.message.content must be a non-empty array of blocks`)
  for (const [index, block] of candidate.content.entries()) {
    if (typeof block !== 'object' || block === null || typeof (block as { type?: unknown }).type !== 'string') {
      fail(`${type} data.message.content[${index}] must be a content block with a type`)
    }
  }
  if (typeof candidate.source !== 'object' || candidate.source === null)
    fail(`${type} data.message.source must be an object`)
  const expectedRole = type === 'assistant/message' ? 'assistant' : 'user'
  if (candidate.role !== expectedRole)
    fail(`${type} data.message.role must be "${expectedRole}", got ${JSON.stringify(candidate.role)}`)
  const toolResult = isToolResultMessage(candidate)
  if (type === 'tool/result' && !toolResult) fail('tool/result data.message must hold exactly one tool-result block')
  if (type !== 'tool/result' && candidate.content.some((block) => block.type === 'tool-result')) {
    fail(`${type} data.message must not hold a tool-result block (log it as tool/result)`)
  }
}

function checkIntent(state: AppendState, type: string, intent: unknown): SurfaceIntent {
  const op = typeof intent === 'object' && intent !== null ? (intent as { op?: unknown }).op : undefined
  if (intent === 'append' || op === 'append') return { op: 'append' }
  if (op !== 'replace') {
    fail(
      `${type} surface intent must be 'append' or { op: 'replace', start, end, sourceEventSeqs }, got ` +
        `${safeJson(intent)}`,
    )
  }
  const { start, end, sourceEventSeqs } = intent as { start: unknown; end: unknown; sourceEventSeqs: unknown }
  const size = state.nodes.length
  if (!Number.isInteger(start) || !Number.isInteger(end))
    fail(`replace start and end must be integers, got ${safeJson(start)} and ${safeJson(end)}`)
  const from = start as number
  const to = end as number
  if (from < 0 || to < from || to >= size) {
    fail(
      `replace range ${from}..${to} is not a run of current surface positions (the surface has ${size} ` +
        `node${size === 1 ? '' : 's'}, positions 0..${size - 1})`,
    )
  }
  if (!Array.isArray(sourceEventSeqs) || sourceEventSeqs.some((seq) => !Number.isInteger(seq))) {
    fail('replace sourceEventSeqs must be an array of event seqs')
  }
  const cited = new Set<number>(sourceEventSeqs as number[])
  for (const seq of cited) {
    if (seq < 0 || seq >= state.length)
      fail(`replace cites seq ${seq}, which is not in the log (length ${state.length})`)
  }
  const run = state.nodes.slice(from, to + 1)
  const keep = checkKeep(run, from, to, (intent as { keep?: unknown }).keep)
  const kept = new Set(keep)
  const missing = run.filter((seq) => !kept.has(seq) && !cited.has(seq))
  if (missing.length)
    fail(
      `replace of positions ${from}..${to} must cite every shadowed seq in sourceEventSeqs; missing ` +
        `${missing.join(', ')}`,
    )
  // Without kept nodes the stored intent is exactly what it was before `keep` existed.
  return {
    op: 'replace',
    start: from,
    end: to,
    sourceEventSeqs: [...(sourceEventSeqs as number[])],
    ...(keep.length ? { keep } : {}),
  }
}

/**
 * The nodes of the run `from..to` a replace keeps: seqs on those positions, in surface order,
 * leaving at least one node to shadow. `undefined` keeps none.
 */
function checkKeep(run: readonly number[], from: number, to: number, keep: unknown): number[] {
  if (keep === undefined) return []
  if (!Array.isArray(keep) || keep.some((seq) => !Number.isInteger(seq)))
    fail(`replace keep must be an array of event seqs, got ${safeJson(keep)}`)
  let last = -1
  for (const seq of keep as number[]) {
    const index = run.indexOf(seq)
    if (index === -1) fail(`replace keep lists seq ${seq}, which is not a surface node at positions ${from}..${to}`)
    if (index <= last)
      fail(`replace keep must list the kept seqs once each and in surface order; seq ${seq} is out of order`)
    last = index
  }
  if (keep.length === run.length)
    fail(`replace of positions ${from}..${to} keeps every node of the run; it must shadow at least one`)
  return [...(keep as number[])]
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value)
  } catch {
    return String(value)
  }
}

/** Rejects an append with `SessionError('INVALID_APPEND')` naming the rule that failed. */
export function fail(message: string): never {
  throw new SessionError('INVALID_APPEND', `invalid session append: ${message}`)
}
