import type { NumbersOf } from './field-error.ts'
import { fieldError, numberField } from './field-error.ts'
import type { ReportPruneDecision } from './report-model.ts'
import { integer } from './report-format.ts'

const NUMBERS = [
  'savedTokens',
  'rewrittenTokens',
  'requestsServed',
  'cacheRead',
  'cacheWrite',
  'saving',
  'cost',
] as const

/**
 * A `compaction/prune-decision` as the report shows it: the action and one sentence with the
 * figures (what the pass saves per request, over how many requests, at what read price,
 * against what the rewrite re-prefills) and the engine's verdict.
 * @throws RunError naming `where` and the field when the event is not what the engine logs.
 */
export function readPruneDecision(
  data: Record<string, unknown>,
  where: string,
): Omit<ReportPruneDecision, 'line' | 'afterRequest'> {
  const { action, reason, cacheWarm } = data
  if (action !== 'prune' && action !== 'fold')
    throw fieldError(where, 'compaction/prune-decision action', '"prune" or "fold"', action)
  if (typeof reason !== 'string') throw fieldError(where, 'compaction/prune-decision reason', 'a string', reason)
  const [saved, rewritten, served, read, write, saving, cost] = NUMBERS.map((key) =>
    numberField(where, `compaction/prune-decision ${key}`, data[key]),
  ) as NumbersOf<typeof NUMBERS>
  const figures =
    cacheWarm === false
      ? `saves ${integer(saved)} tokens a request; the cache was cold, so the rewrite cost nothing`
      : `saves ${integer(saved)} tokens × ${served} request(s) × ${read} = ${integer(saving)} against ` +
        `${integer(rewritten)} re-prefilled tokens × (${write} − ${read}) = ${integer(cost)}`
  return { action, text: `${figures}; ${reason}` }
}
