/**
 * The text that stands in for the omitted middle of a pruned tool result.
 *
 * It is a constant with no counts, sizes or ids in it, so pruning the same result twice (or on
 * two machines, or after a reopen) writes the same bytes, and a provider cache that saw one
 * pruned request can hit on the next. The newlines keep it on its own line in line-oriented
 * output (logs, diffs, file listings), so the model reads it as a notice, not as data.
 */
export const PRUNE_MARKER = '\n[... tool result pruned by warmfold: middle omitted ...]\n'
