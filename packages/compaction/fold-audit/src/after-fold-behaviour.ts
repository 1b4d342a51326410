import { canonicalJson } from '@warmfold/llm'
import type { LoggedMessage } from './logged-message.ts'
import { checkLoggedMessages } from './logged-message.ts'
import type { ToolKind, ToolKinds } from './tool-kind.ts'
import { resolveToolKind } from './tool-kind.ts'

/** The default window of the re-work measure: the first 10 assistant steps after the fold. */
export const DEFAULT_WINDOW_STEPS = 10

/**
 * The log around one fold, as plain data (what a session log, a store or an AI SDK transcript
 * gives): tool calls are read from assistant messages, results from tool-result messages,
 * paired by call id. Each list in log order.
 */
export interface AfterFoldInput {
  /** The region the fold replaced: its read-only calls are what re-work repeats. */
  readonly folded: readonly LoggedMessage[]
  /**
   * The session's messages before the fold (the folded region included, earlier checkpoints'
   * regions too if the caller has them): the baseline repeat rate is measured on them. Default:
   * `folded`.
   */
  readonly beforeFold?: readonly LoggedMessage[]
  /**
   * What the model still sees after the fold besides the checkpoint (carried messages, the retained
   * tail): repeating one of their calls is not re-work.
   */
  readonly retained?: readonly LoggedMessage[]
  /** The messages logged after the fold, in order; every assistant message is one step. */
  readonly after: readonly LoggedMessage[]
  /** The host's declaration of its tools (default: `defaultToolKind` of each name). */
  readonly toolKinds?: ToolKinds
  /**
   * N: how many assistant steps after the fold the re-work and loop measures look at (default
   * {@link DEFAULT_WINDOW_STEPS}).
   */
  readonly windowSteps?: number
}

/** A read-only call after the fold that the folded region already held, with the same tool and arguments. */
export interface RepeatedCall {
  /** Seq of the assistant message of the repeat. */
  readonly seq: number
  readonly name: string
  readonly arguments: string
  /** Seq of the newest assistant message of the folded region that held the same call. */
  readonly foldedSeq: number
}

/** The same call with the same result, several times in the window. */
export interface CallLoop {
  readonly name: string
  readonly arguments: string
  readonly count: number
  /** Seqs of the assistant messages of the calls. */
  readonly seqs: readonly number[]
}

/** The behaviour of the agent after one fold. Plain JSON. */
export interface AfterFoldBehaviour {
  readonly windowSteps: number
  /** Assistant steps after the fold the window holds (fewer than `windowSteps` when the log ends sooner). */
  readonly stepsObserved: number
  /** Read-only calls in the window. */
  readonly readCalls: number
  /**
   * Read-only calls in the window that repeat a read-only call of the folded region (same tool,
   * same arguments as canonical JSON) that no retained message holds.
   */
  readonly repeatedReads: readonly RepeatedCall[]
  /** `repeatedReads.length / readCalls` (0 without read calls). */
  readonly repeatRate: number
  /**
   * Share of the read-only calls before the fold that repeat an earlier one before the fold; `null`
   * without read calls before it.
   */
  readonly baselineRepeatRate: number | null
  /**
   * `repeatRate − baselineRepeatRate` (the baseline counts 0 when it is `null`): re-work the fold
   * caused, net of the session's own habit.
   */
  readonly netReworkRate: number
  /** `repeatedReads.length − baselineRepeatRate × readCalls`: the same in calls. */
  readonly netReworkCalls: number
  /** Identical call and result seen at least twice in the window, most repeated first. */
  readonly loops: readonly CallLoop[]
  /**
   * 1-based index of the first step after the fold with a `write` call; `null` when none of the
   * `after` steps has one.
   */
  readonly stepsToFirstWrite: number | null
}

/** A tool call of an assistant message (one step), with its identity (`callKey`) and kind. */
interface Call extends Pick<RepeatedCall, 'seq' | 'name' | 'arguments'> {
  readonly id: string
  readonly key: string
  readonly kind: ToolKind
}

/**
 * The identity of a call: its tool and its arguments as canonical JSON (so key order and spacing do
 * not matter), raw when they are not JSON.
 */
function callKey(name: string, argumentsText: string): string {
  let canonical: string
  try {
    canonical = canonicalJson(JSON.parse(argumentsText))
  } catch {
    canonical = argumentsText.trim()
  }
  return `${name}\u0000${canonical}`
}

/** The calls of `messages`, per assistant message (one step each), and the results by call id. */
function read(
  messages: readonly LoggedMessage[],
  toolKinds: ToolKinds | undefined,
): { steps: Call[][]; results: Map<string, string> } {
  const steps: Call[][] = []
  const results = new Map<string, string>()
  for (const { seq, message } of messages) {
    if (message.role === 'assistant') {
      const calls: Call[] = []
      for (const block of message.content) {
        if (block.type !== 'tool-call') continue
        calls.push({
          seq,
          id: block.id,
          name: block.name,
          arguments: block.arguments,
          key: callKey(block.name, block.arguments),
          kind: resolveToolKind(toolKinds, block.name, block.arguments),
        })
      }
      steps.push(calls)
      continue
    }
    for (const block of message.content) {
      if (block.type !== 'tool-result') continue
      const text = block.content.map((part) => (part.type === 'text' ? part.text : `[${part.mediaType}]`)).join('\n')
      results.set(block.toolCallId, `${block.isError ? 'error' : 'ok'}\u0000${text}`)
    }
  }
  return { steps, results }
}

/**
 * Measures how the agent behaves after a fold, from plain log data: re-work (read-only calls in
 * the next N steps that repeat, with identical tool and arguments, a call the folded region
 * held and no retained message holds), net of the session's repeat rate before the fold;
 * identical call-and-result loops in the same window; and the steps to the first writing call.
 * @throws TypeError for messages that are not `{ seq, message }[]` in log order, or a window that
 * is not a positive integer.
 */
export function afterFoldBehaviour(input: AfterFoldInput): AfterFoldBehaviour {
  if (input === null || typeof input !== 'object') throw new TypeError('afterFoldBehaviour(input) must be an object')
  const folded = checkLoggedMessages(input.folded, 'afterFoldBehaviour: folded')
  const before =
    input.beforeFold === undefined ? folded : checkLoggedMessages(input.beforeFold, 'afterFoldBehaviour: beforeFold')
  const retained =
    input.retained === undefined ? [] : checkLoggedMessages(input.retained, 'afterFoldBehaviour: retained')
  const after = checkLoggedMessages(input.after, 'afterFoldBehaviour: after')
  const windowSteps = input.windowSteps ?? DEFAULT_WINDOW_STEPS
  if (!Number.isSafeInteger(windowSteps) || windowSteps <= 0)
    throw new TypeError(
      `afterFoldBehaviour: windowSteps must be a positive integer, got ${JSON.stringify(input.windowSteps)}`,
    )

  const heldByFold = new Map<string, number>()
  for (const call of read(folded, input.toolKinds).steps.flat())
    if (call.kind === 'read') heldByFold.set(call.key, call.seq)
  const stillVisible = new Set(
    read(retained, input.toolKinds)
      .steps.flat()
      .map((call) => call.key),
  )

  // The session's own habit: how many of its read-only calls before the fold repeated an earlier one.
  let baselineReads = 0
  let baselineRepeats = 0
  const seenBefore = new Set<string>()
  for (const call of read(before, input.toolKinds).steps.flat()) {
    if (call.kind !== 'read') continue
    baselineReads++
    if (seenBefore.has(call.key)) baselineRepeats++
    seenBefore.add(call.key)
  }
  const baselineRepeatRate = baselineReads === 0 ? null : baselineRepeats / baselineReads

  const { steps, results } = read(after, input.toolKinds)
  const window = steps.slice(0, windowSteps)
  const repeatedReads: RepeatedCall[] = []
  let readCalls = 0
  const outcomes = new Map<string, { name: string; arguments: string; seqs: number[] }>()
  for (const call of window.flat()) {
    if (call.kind === 'read') {
      readCalls++
      const foldedSeq = heldByFold.get(call.key)
      if (foldedSeq !== undefined && !stillVisible.has(call.key))
        repeatedReads.push({ seq: call.seq, name: call.name, arguments: call.arguments, foldedSeq })
    }
    const result = results.get(call.id)
    if (result === undefined) continue
    const outcome = `${call.key}\u0000${result}`
    const entry = outcomes.get(outcome)
    if (entry) entry.seqs.push(call.seq)
    else outcomes.set(outcome, { name: call.name, arguments: call.arguments, seqs: [call.seq] })
  }
  const loops = [...outcomes.values()]
    .filter((entry) => entry.seqs.length >= 2)
    .map((entry) => ({ name: entry.name, arguments: entry.arguments, count: entry.seqs.length, seqs: entry.seqs }))
    .toSorted((a, b) => b.count - a.count || a.seqs[0]! - b.seqs[0]!)
  const firstWrite = steps.findIndex((calls) => calls.some((call) => call.kind === 'write'))
  const repeatRate = readCalls === 0 ? 0 : repeatedReads.length / readCalls
  return {
    windowSteps,
    stepsObserved: window.length,
    readCalls,
    repeatedReads,
    repeatRate,
    baselineRepeatRate,
    netReworkRate: repeatRate - (baselineRepeatRate ?? 0),
    netReworkCalls: repeatedReads.length - (baselineRepeatRate ?? 0) * readCalls,
    loops,
    stepsToFirstWrite: firstWrite < 0 ? null : firstWrite + 1,
  }
}
