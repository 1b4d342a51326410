// The thinking vocabulary the config and the adapter share: level names, the table shape and each
// model family's defaults. It imports neither, so the config can check efforts against a family's
// table while the table reads the config's model entries, without an import cycle.

/** Thinking levels as the Gemini docs name them (https://ai.google.dev/gemini-api/docs/thinking). */
export const THINKING_LEVEL_NAMES = ['minimal', 'low', 'medium', 'high'] as const

/** One documented thinking level. */
export type ThinkingLevelName = (typeof THINKING_LEVEL_NAMES)[number]

/** A model's effective thinking table: budgets (Gemini 2.5) or levels (Gemini 3). */
export type ThinkingTable =
  | { readonly kind: 'budget'; readonly table: { readonly [effort: string]: number } }
  | { readonly kind: 'level'; readonly table: { readonly [effort: string]: ThinkingLevelName } }

/**
 * Defaults per model family, from the thinking guide's tables: 2.5 Pro thinks in 128–32768 tokens
 * and cannot turn thinking off; 2.5 Flash takes 0–24576 (0 off); 2.5 Flash-Lite 512–24576 (0 off);
 * `-1` is dynamic everywhere. Gemini 3 takes `thinkingLevel` (Pro: low/high; Flash also minimal
 * and medium) and cannot turn thinking off. Checked in order; the first prefix that matches wins.
 */
export const DEFAULT_THINKING: ReadonlyArray<{ readonly prefix: string; readonly thinking: ThinkingTable }> =
  Object.freeze<Array<{ prefix: string; thinking: ThinkingTable }>>([
    { prefix: 'gemini-3-pro', thinking: { kind: 'level', table: { low: 'low', high: 'high' } } },
    {
      prefix: 'gemini-3',
      thinking: { kind: 'level', table: { minimal: 'minimal', low: 'low', medium: 'medium', high: 'high' } },
    },
    {
      prefix: 'gemini-2.5-pro',
      thinking: { kind: 'budget', table: { low: 1024, medium: 8192, high: 32768, dynamic: -1 } },
    },
    {
      prefix: 'gemini-2.5-flash-lite',
      thinking: { kind: 'budget', table: { off: 0, low: 1024, medium: 8192, high: 24576, dynamic: -1 } },
    },
    {
      prefix: 'gemini-2.5-flash',
      thinking: { kind: 'budget', table: { off: 0, low: 1024, medium: 8192, high: 24576, dynamic: -1 } },
    },
  ])

/**
 * The thinking table of model `id`'s family ({@link DEFAULT_THINKING}, first prefix
 * wins), or `undefined` for an unknown family.
 */
export function defaultThinking(id: string): ThinkingTable | undefined {
  return DEFAULT_THINKING.find(({ prefix }) => id.startsWith(prefix))?.thinking
}
