import { ThinkingLevel } from '@google/genai'
import { LlmError } from '@warmfold/llm'
import type { GoogleModelConfig } from './config.ts'

/** Thinking levels as the Gemini docs name them (https://ai.google.dev/gemini-api/docs/thinking). */
export const THINKING_LEVEL_NAMES = ['minimal', 'low', 'medium', 'high'] as const

/** One documented thinking level. */
export type ThinkingLevelName = (typeof THINKING_LEVEL_NAMES)[number]

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

/** A model's effective thinking table: budgets (Gemini 2.5) or levels (Gemini 3). */
export type ThinkingTable = { readonly kind: 'budget'; readonly table: { readonly [effort: string]: number } } | { readonly kind: 'level'; readonly table: { readonly [effort: string]: ThinkingLevelName } }

/**
 * Defaults per model family, from the thinking guide's tables: 2.5 Pro thinks in 128–32768 tokens
 * and cannot turn thinking off; 2.5 Flash takes 0–24576 (0 off); 2.5 Flash-Lite 512–24576 (0 off);
 * `-1` is dynamic everywhere. Gemini 3 takes `thinkingLevel` (Pro: low/high; Flash also minimal
 * and medium) and cannot turn thinking off. Checked in order; the first prefix that matches wins.
 */
export const DEFAULT_THINKING: ReadonlyArray<{ readonly prefix: string; readonly thinking: ThinkingTable }> = Object.freeze<Array<{ prefix: string; thinking: ThinkingTable }>>([
  { prefix: 'gemini-3-pro', thinking: { kind: 'level', table: { low: 'low', high: 'high' } } },
  { prefix: 'gemini-3', thinking: { kind: 'level', table: { minimal: 'minimal', low: 'low', medium: 'medium', high: 'high' } } },
  { prefix: 'gemini-2.5-pro', thinking: { kind: 'budget', table: { low: 1024, medium: 8192, high: 32768, dynamic: -1 } } },
  { prefix: 'gemini-2.5-flash-lite', thinking: { kind: 'budget', table: { off: 0, low: 1024, medium: 8192, high: 24576, dynamic: -1 } } },
  { prefix: 'gemini-2.5-flash', thinking: { kind: 'budget', table: { off: 0, low: 1024, medium: 8192, high: 24576, dynamic: -1 } } },
])

/** The thinking table of model `id`: its own config, else the family default, else none (no thinking controls). */
export function thinkingTable(id: string, model: GoogleModelConfig): ThinkingTable | undefined {
  if (model.thinkingBudgets) return { kind: 'budget', table: model.thinkingBudgets }
  if (model.thinkingLevels) return { kind: 'level', table: model.thinkingLevels }
  return DEFAULT_THINKING.find(({ prefix }) => id.startsWith(prefix))?.thinking
}

/**
 * The `thinkingConfig` for `effort`: nothing without an effort; `{ thinkingBudget: 0 }` for a zero
 * budget (no thoughts to include); otherwise the budget or level, with `includeThoughts` first
 * when asked, so thought summaries stream as reasoning blocks.
 * @throws LlmError `UNSUPPORTED_REASONING_EFFORT` naming the efforts the model knows.
 */
export function thinkingConfigFor(effort: string | undefined, table: ThinkingTable | undefined, where: { provider: string; model: string; includeThoughts: boolean }): WireThinkingConfig | undefined {
  if (effort === undefined) return undefined
  if (!table || !Object.hasOwn(table.table, effort)) {
    const known = table ? Object.keys(table.table).join(', ') : '(none: the model has no thinking table)'
    throw new LlmError('UNSUPPORTED_REASONING_EFFORT', `reasoningEffort "${effort}" has no thinking setting for ${where.provider}/${where.model}; known efforts: ${known}`, {
      provider: where.provider,
      retryable: false,
    })
  }
  if (table.kind === 'budget') {
    const budget = table.table[effort]!
    return budget === 0 ? { thinkingBudget: 0 } : { ...(where.includeThoughts ? { includeThoughts: true } : {}), thinkingBudget: budget }
  }
  return { ...(where.includeThoughts ? { includeThoughts: true } : {}), thinkingLevel: THINKING_LEVEL_WIRE[table.table[effort]!] }
}
