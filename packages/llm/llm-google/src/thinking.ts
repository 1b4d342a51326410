import { ThinkingLevel } from '@google/genai'
import { unsupportedEffort } from '@warmfold/llm/adapter'
import type { GoogleModelConfig } from './config.ts'
import type { ThinkingLevelName, ThinkingTable } from './default-thinking.ts'
import { defaultThinking } from './default-thinking.ts'

/** The wire value of each level: the SDK's `ThinkingLevel` enum, which is what Google's own client sends. */
export const THINKING_LEVEL_WIRE: Readonly<Record<ThinkingLevelName, ThinkingLevel>> = Object.freeze({
  minimal: ThinkingLevel.MINIMAL,
  low: ThinkingLevel.LOW,
  medium: ThinkingLevel.MEDIUM,
  high: ThinkingLevel.HIGH,
})

/** The `thinkingConfig` of one request, keys in the order they are sent. */
export interface WireThinkingConfig {
  includeThoughts?: boolean
  thinkingBudget?: number
  thinkingLevel?: ThinkingLevel
}

/** The thinking table of model `id`: its own config, else the family default, else none (no thinking controls). */
export function thinkingTable(id: string, model: GoogleModelConfig): ThinkingTable | undefined {
  if (model.thinkingBudgets) return { kind: 'budget', table: model.thinkingBudgets }
  if (model.thinkingLevels) return { kind: 'level', table: model.thinkingLevels }
  return defaultThinking(id)
}

/**
 * The output tokens `effort` reserves for thinking: its `thinkingBudget` when the table gives a
 * positive one (Gemini counts thinking against `maxOutputTokens`); 0 for a level (no documented
 * token count), a dynamic budget (`-1`), thinking off (`0`) or an effort the table does not know.
 */
export function thinkingReserve(table: ThinkingTable | undefined, effort: string): number {
  if (table?.kind !== 'budget' || !Object.hasOwn(table.table, effort)) return 0
  return Math.max(0, table.table[effort]!)
}

/**
 * The `thinkingConfig` for `effort`: nothing without an effort; `{ thinkingBudget: 0 }` for a zero
 * budget (no thoughts to include); otherwise the budget or level, with `includeThoughts` first
 * when asked, so thought summaries stream as reasoning blocks.
 * @throws LlmError `UNSUPPORTED_REASONING_EFFORT` naming the efforts the model knows.
 */
export function thinkingConfigFor(
  effort: string | undefined,
  table: ThinkingTable | undefined,
  where: { provider: string; model: string; includeThoughts: boolean },
): WireThinkingConfig | undefined {
  if (effort === undefined) return undefined
  if (!table || !Object.hasOwn(table.table, effort)) {
    const known = table ? Object.keys(table.table).join(', ') : '(none: the model has no thinking table)'
    throw unsupportedEffort(where, effort, 'thinking setting', known)
  }
  if (table.kind === 'budget') {
    const budget = table.table[effort]!
    return budget === 0
      ? { thinkingBudget: 0 }
      : { ...(where.includeThoughts ? { includeThoughts: true } : {}), thinkingBudget: budget }
  }
  return {
    ...(where.includeThoughts ? { includeThoughts: true } : {}),
    thinkingLevel: THINKING_LEVEL_WIRE[table.table[effort]!],
  }
}
