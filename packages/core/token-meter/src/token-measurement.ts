/** The price of one surface node. */
export interface NodePrice {
  /** Seq of the surface event whose message is the node. */
  readonly seq: number
  /** Estimated prompt tokens of the node's message (see `estimateMessage`). */
  readonly tokens: number
}

/** A total computed from estimates only: `envelopeTokens + surfaceTokens`. */
export interface HeuristicBaseline {
  readonly kind: 'heuristic'
  /** Estimated prompt tokens of the next request. */
  readonly tokens: number
}

/**
 * A total anchored on what the provider reported for an earlier request of the same envelope:
 * `reportedPromptTokens + ` the estimates of every surface node with `seq >= anchorSeq`.
 */
export interface UsageBaseline {
  readonly kind: 'usage'
  /** Prompt tokens of the next request: reported total plus estimates of what was appended since. */
  readonly tokens: number
  /** Seq of the `assistant/message` whose usage is the anchor. */
  readonly anchorSeq: number
  /** Prompt total the provider reported for it (uncached + cache read + cache write). */
  readonly reportedPromptTokens: number
}

/** Where {@link TokenMeasurement.totalTokens} comes from. */
export type TokenBaseline = HeuristicBaseline | UsageBaseline

/**
 * How large the next request of a session is, in tokens. Frozen.
 *
 * Invariants: `surfaceTokens` is the sum of `nodes[].tokens`; the heuristic total is
 * `envelopeTokens + surfaceTokens`; `totalTokens === baseline.tokens`.
 */
export interface TokenMeasurement {
  /**
   * Every current surface node in request order with its price. Computed on first read and
   * cached (O(surface) once); the scalar fields never need it.
   */
  readonly nodes: readonly NodePrice[]
  /** Sum of the node prices of the current surface. */
  readonly surfaceTokens: number
  /** Estimated tokens of the current request header's system prompt and tools; `0` without a header. */
  readonly envelopeTokens: number
  /** Best estimate of the next request's prompt tokens; equals `baseline.tokens`. */
  readonly totalTokens: number
  /** How `totalTokens` was obtained. */
  readonly baseline: TokenBaseline
}

/**
 * Builds a frozen measurement whose `nodes` getter runs `init.nodes` once (on its first read)
 * and caches the frozen result, so taking a measurement costs O(1) however long the surface is.
 */
export function createTokenMeasurement(
  init: Pick<TokenMeasurement, 'surfaceTokens' | 'envelopeTokens' | 'baseline'> & { nodes: () => readonly NodePrice[] },
): TokenMeasurement {
  let nodes: readonly NodePrice[] | undefined
  const baseline = Object.freeze({ ...init.baseline })
  return Object.freeze({
    get nodes(): readonly NodePrice[] {
      nodes ??= Object.freeze(init.nodes())
      return nodes
    },
    surfaceTokens: init.surfaceTokens,
    envelopeTokens: init.envelopeTokens,
    totalTokens: baseline.tokens,
    baseline,
  })
}
