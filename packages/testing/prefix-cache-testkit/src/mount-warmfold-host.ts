import type { Context } from '@cordisjs/core'
import { AgentLoop, ToolRegistry } from '@warmfold/agent-loop'
import { CacheLedger } from '@warmfold/cache-ledger'
import { CompactionInvariants } from '@warmfold/compaction'
import type { BasicCompactionConfig } from '@warmfold/compaction-basic'
import { BasicCompactionEngine } from '@warmfold/compaction-basic'
import { ToolResultPruner } from '@warmfold/compaction-tool-result-pruner'
import { LlmRuntime } from '@warmfold/llm'
import { SessionStore } from '@warmfold/session'
import { TokenMeter } from '@warmfold/token-meter'

/** What {@link mountWarmfoldHost} mounts besides the fixed services. */
export interface WarmfoldHostOptions {
  /** The engine class: `BasicCompactionEngine` (default) or a subclass such as a reference strategy. */
  readonly engine?: typeof BasicCompactionEngine
  readonly engineConfig?: BasicCompactionConfig
  /** Pruner budgets; omitted, no pruner is mounted. */
  readonly pruner?: { readonly thresholdChars: number; readonly headChars: number; readonly tailChars: number }
  /**
   * The session store's config; omitted, the store keeps sessions in memory. `{ store: 'file', directory }` keeps
   * each log as a JSONL file.
   */
  readonly sessions?: Partial<SessionStore.Config>
  /** Cache ledger config (default: its defaults); `false` leaves the ledger out (only to measure what it costs). */
  readonly ledger?: Partial<CacheLedger.Config> | false
}

/**
 * Mounts a complete warmfold host in `ctx`, in dependency order: the LLM runtime, an in-memory
 * session store, the cache ledger, the tool registry, the agent loop, the token meter, the
 * compaction invariant checker, the pruner (optional) and the compaction engine. Callers
 * register an adapter and tools.
 */
export function mountWarmfoldHost(ctx: Context, options: WarmfoldHostOptions = {}): void {
  ctx.plugin(LlmRuntime)
  ctx.plugin(SessionStore, options.sessions ?? {})
  if (options.ledger !== false) ctx.plugin(CacheLedger, options.ledger ?? {})
  ctx.plugin(ToolRegistry)
  ctx.plugin(AgentLoop)
  ctx.plugin(TokenMeter, {})
  ctx.plugin(CompactionInvariants)
  if (options.pruner) ctx.plugin(ToolResultPruner, options.pruner)
  ctx.plugin(options.engine ?? BasicCompactionEngine, options.engineConfig ?? {})
}
