import { isRecord } from '@warmfold/cache-ledger/prefix'

/**
 * Output caps a summary call may change (rule C2: only the output budget may differ), as the
 * providers' wire formats name them.
 */
export const OUTPUT_CAP_KEYS: ReadonlySet<string> = new Set([
  'max_tokens',
  'max_completion_tokens',
  'max_output_tokens',
  'maxOutputTokens',
])

/** How a summary call's request body relates to the body of the request it replays. */
export interface BodyReplay {
  /** The body is the previous one plus exactly one appended element (the instruction), output cap aside. */
  readonly replay: boolean
  /**
   * Where the one appended element sits (`$.messages[12]`, or `$.messages[11].content[3]` when
   * the provider merged it into the last user message).
   */
  readonly appendedAt?: string
  /** The first path whose value differs (when `replay` is false). */
  readonly firstDifferingPath?: string
}

/**
 * Compares the body the provider received for a summary call with the body of the request it
 * replays: `replay` when the summary body is the previous body with exactly one element appended
 * to one array and nothing else changed but the output cap. Otherwise the first differing path,
 * in the summary body's key order, so a reader sees which setting or message broke the prefix.
 */
export function compareBodies(previous: unknown, summary: unknown): BodyReplay {
  const state: { appendedAt?: string } = {}
  const difference = firstDifference(previous, summary, '$', state)
  if (difference !== undefined) return { replay: false, firstDifferingPath: difference }
  if (state.appendedAt === undefined) return { replay: false, firstDifferingPath: '$ (nothing was appended)' }
  return { replay: true, appendedAt: state.appendedAt }
}

function firstDifference(
  previous: unknown,
  summary: unknown,
  path: string,
  state: { appendedAt?: string },
): string | undefined {
  if (Array.isArray(previous) && Array.isArray(summary)) {
    const shared = Math.min(previous.length, summary.length)
    for (let index = 0; index < shared; index++) {
      const difference = firstDifference(previous[index], summary[index], `${path}[${index}]`, state)
      if (difference !== undefined) return difference
    }
    if (summary.length === previous.length) return undefined
    if (summary.length === previous.length + 1 && state.appendedAt === undefined) {
      state.appendedAt = `${path}[${previous.length}]`
      return undefined
    }
    return `${path}[${shared}]`
  }
  if (isRecord(previous) && isRecord(summary)) {
    const keys = [...Object.keys(summary), ...Object.keys(previous).filter((key) => !(key in summary))]
    for (const key of keys) {
      if (OUTPUT_CAP_KEYS.has(key)) continue
      const difference = firstDifference(previous[key], summary[key], `${path}.${key}`, state)
      if (difference !== undefined) return difference
    }
    return undefined
  }
  return JSON.stringify(previous) === JSON.stringify(summary) ? undefined : path
}

/** A request body as a value: the AI SDK gives providers' bodies as objects or as JSON text. */
export function bodyValue(body: unknown): unknown {
  if (typeof body !== 'string') return body
  try {
    return JSON.parse(body)
  } catch {
    return body
  }
}
