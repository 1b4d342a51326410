import type { Context } from '@cordisjs/core'
import { Service } from '@cordisjs/core'
import type { ConfigParser, Parsed, ToolResultContent, WarmfoldPluginInfo } from '@warmfold/llm'
import { integerSchema, strictConfig, WARMFOLD_PLUGIN } from '@warmfold/llm'
import type { Session } from '@warmfold/session'
import type { TokenMeter } from '@warmfold/token-meter'
import Schema from 'schemastery'
import { checkPruneBudget, DEFAULT_PRUNE_BUDGET } from './prune-budget.ts'
import { pruneContent } from './prune-content.ts'
import type { PruneFilter, PrunePlanEntry, PruneResult } from './prune-plan.ts'
import { includesSeq } from './prune-plan.ts'
import { applyPrunePlan, planResultPrune } from './prune-session.ts'

declare module '@cordisjs/core' {
  interface Context {
    toolResultPruner: ToolResultPruner
  }
}

/**
 * The `ctx.toolResultPruner` service: a model-free pass that shortens oversized tool results
 * to head + {@link PRUNE_MARKER} + tail, in code points.
 *
 * It works in two steps so a compaction engine can decide before anything changes:
 * {@link planSession} prices a pass without writing (no prompt byte moves), and
 * {@link pruneSession} lands it, each rewrite as a `compaction/prune` pricing event followed
 * immediately by a content-only `tool/result` replace of the same surface position. Both take
 * an `include` filter so the engine can leave a region it is about to summarize byte-identical
 * (cache rule C4).
 */
export class ToolResultPruner extends Service<ToolResultPruner.Config> {
  static readonly [WARMFOLD_PLUGIN]: WarmfoldPluginInfo = {
    packageName: '@warmfold/compaction-tool-result-pruner',
    provides: 'ctx.toolResultPruner',
  }
  static [Service.provide] = 'toolResultPruner'
  static [Service.immediate]: boolean = true
  static inject = ['tokenMeter']

  constructor(ctx: Context, config: Parsed<ToolResultPruner.Config>) {
    super(ctx, config)
  }

  /**
   * Prunes the content of one tool result with this service's budgets; `null` when the text
   * blocks together hold at most `thresholdChars` code points. See the standalone
   * {@link pruneContent} for exactly what is kept.
   */
  pruneContent(blocks: readonly ToolResultContent[]): ToolResultContent[] | null {
    return pruneContent(blocks, this.config)
  }

  /**
   * The rewrites a pass would make, in surface order: one entry per surface node whose event is
   * a `tool/result` with over-budget content and whose seq `include` admits. A pinned result
   * (`pinMessage` from `@warmfold/compaction`) is never rewritten: the host asked for it verbatim.
   *
   * **Pure**: it appends nothing and changes nothing, so `session.length`,
   * `session.surface.replaceGeneration` and the bytes of `deriveMessages()` are the same before
   * and after. This is how an engine prices a pass (`originalTokens - prunedTokens` per entry)
   * and decides between pruning everywhere, pruning only the retained tail, or not pruning,
   * without touching the prefix the provider has cached.
   *
   * @param include seqs (or a predicate over seqs) that may be rewritten; default all. Pass
   *   only the seqs after a region a summary will replay, so that region stays byte-identical
   *   (rule C4).
   */
  planSession(session: Session, include?: PruneFilter): PrunePlanEntry[] {
    const plan: PrunePlanEntry[] = []
    for (const [position, seq] of session.surface.nodes.entries()) {
      if (!includesSeq(include, seq) || session.eventAt(seq)?.type !== 'tool/result') continue
      const entry = planResultPrune(session, position, this.config, this.meter)
      if (entry) plan.push(entry)
    }
    return plan
  }

  /**
   * Lands the rewrites {@link planSession} finds for the seqs `include` admits, in surface
   * order. For each one it appends
   * 1. `compaction/prune { shadowedRange: { start: position, end: position }, shadowedSeqs: [seq],
   *    shadowedTokenCount: originalTokens }`, the pricing event, and immediately after it
   * 2. a `tool/result` whose message has the same `toolCallId`, the same `isError` flag and the
   *    pruned content, with the original event's `toolName`, `turn` and `step`, as
   *    `{ op: 'replace', start: position, end: position, sourceEventSeqs: [seq] }`.
   *
   * Each pair is appended as one `session.unit`, so a store persists both events or neither.
   * Each replace swaps one node for one node, so no other node's position moves and every node
   * not rewritten derives the same bytes as before. The original events stay in the log. A
   * second pass finds nothing (pruned results are within budget) and writes nothing.
   *
   * @throws whatever the session throws when it rejects an append (an invariant checker, a
   *   closed session); rewrites landed before it stay in the log. Also throws when the surface
   *   changes under the pass (a listener appending in between), before writing anything more.
   */
  pruneSession(session: Session, include?: PruneFilter): PruneResult {
    return applyPrunePlan(session, this.planSession(session, include))
  }

  private get meter(): TokenMeter {
    return this.ctx.tokenMeter
  }
}

export namespace ToolResultPruner {
  /** Code-point budgets (see `PruneBudget`). */
  export interface Config {
    /** Results whose text holds at most this many code points are left alone. Default 8192. */
    thresholdChars: number
    /** Code points kept from the start of an over-budget result. Default 4096. */
    headChars: number
    /** Code points kept from the end of an over-budget result. Default 1024. */
    tailChars: number
  }

  const parse = strictConfig(
    'ToolResultPruner',
    Schema.object({
      thresholdChars: integerSchema(1)
        .default(DEFAULT_PRUNE_BUDGET.thresholdChars)
        .description('Results at most this many code points long are left alone.'),
      headChars: integerSchema()
        .default(DEFAULT_PRUNE_BUDGET.headChars)
        .description('Code points kept from the start of an over-budget result.'),
      tailChars: integerSchema()
        .default(DEFAULT_PRUNE_BUDGET.tailChars)
        .description('Code points kept from the end of an over-budget result.'),
    }),
  ) as ConfigParser<Config>

  /**
   * Validates and fills the config; unknown keys, non-integers and negative values fail, and
   * so does `headChars + PRUNE_MARKER length + tailChars > thresholdChars` (the error names
   * the three keys and their values). cordis runs this at load, so a bad config is an
   * `internal/error` and the plugin does not start.
   */
  export const Config: ConfigParser<Config> = Object.assign(
    (config?: unknown): Config => {
      const value = parse(config)
      try {
        checkPruneBudget(value)
      } catch (error) {
        throw new RangeError(`ToolResultPruner config: ${(error as Error).message}`, { cause: error })
      }
      return value
    },
    { schema: parse.schema },
  )
}
