import { integerRange, numberProblem, unknownKeyMessage } from '@warmfold/llm'
import Schema from 'schemastery'
import type { KeepUserMessages } from '../fold/fold-carry.ts'

/**
 * Policy key `keepUserMessages`: which user-authored messages of a folded region (not tool
 * results, checkpoints or plugin messages) a fold carries verbatim after its checkpoint.
 * `{ maxTokens }`: the user's task (the first user-authored message on the surface) and then the
 * newest ones, while their token prices fit `maxTokens` together. `false`: none (only pinned
 * messages are carried). Absent: the same with the {@link KEEP_USER_MESSAGES_DEFAULT} budget.
 */
export type KeepUserMessagesPolicy = { maxTokens: number } | false

/**
 * The default budget of kept user messages: 5 % of the conversation's context window, at most
 * 20,000 tokens (Codex's fixed budget for the user messages it keeps). 400 tokens at an 8k
 * window, 1,600 at 32k, 6,400 at 128k.
 */
export const KEEP_USER_MESSAGES_DEFAULT = Object.freeze({ windowShare: 0.05, maxTokens: 20_000 })

/** `keepUserMessages` resolved: a budget, capped by a share of the window for the default. */
export interface ResolvedKeepUserMessages {
  readonly maxTokens: number
  /** Set for the default: the budget is `min(maxTokens, floor(contextWindow × windowShare))`. */
  readonly windowShare?: number
}

/** The `keepUserMessages` schema: `{ maxTokens }`, `false`, or absent. */
export function keepUserMessagesSchema(): Schema<KeepUserMessagesPolicy | undefined> {
  // A union with undefined: an object schema alone would fill in `{}` and then miss maxTokens.
  return Schema.union([
    Schema.object({
      // Its range is checked by keepUserMessagesProblem: a union's own error would not name the key.
      maxTokens: Schema.number().required().description('Token budget of the kept messages (1..2^31 − 1).'),
    }),
    Schema.const(false as const),
    Schema.const(undefined as never),
  ]).description(
    "Carry the user's task and newest messages of a folded region verbatim after the checkpoint " +
      '({ maxTokens }; false: none; default 5 % of the window, at most 20,000 tokens).',
  ) as unknown as Schema<KeepUserMessagesPolicy | undefined>
}

/** What is wrong with `keepUserMessages` (an unknown key), or undefined. */
export function keepUserMessagesProblem(policy: KeepUserMessagesPolicy | undefined): string | undefined {
  if (!policy) return undefined
  for (const key of Object.keys(policy))
    if (key !== 'maxTokens') return `keepUserMessages: ${unknownKeyMessage(key, ['maxTokens'])}`
  return numberProblem('keepUserMessages.maxTokens', policy.maxTokens, integerRange(1))
}

/** The policy value with the default applied; undefined when it is `false`. */
export function resolveKeepUserMessages(
  policy: KeepUserMessagesPolicy | undefined,
): ResolvedKeepUserMessages | undefined {
  if (policy === false) return undefined
  if (policy === undefined) return KEEP_USER_MESSAGES_DEFAULT
  return Object.freeze({ maxTokens: policy.maxTokens })
}

/** The token budget of kept user messages for a conversation with `contextWindow` tokens. */
export function keptUserBudget(
  resolved: ResolvedKeepUserMessages | undefined,
  contextWindow: number,
): KeepUserMessages | undefined {
  if (!resolved) return undefined
  if (resolved.windowShare === undefined) return { maxTokens: resolved.maxTokens }
  return { maxTokens: Math.min(resolved.maxTokens, Math.floor(contextWindow * resolved.windowShare)) }
}
