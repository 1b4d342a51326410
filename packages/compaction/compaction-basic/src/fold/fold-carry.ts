import { isCheckpointMessage, pinnedSeqs } from '@warmfold/compaction'
import type { Message } from '@warmfold/llm'
import type { Session } from '@warmfold/session'
import type { SurfaceRegion } from './select-region.ts'

/** What a fold of one region keeps verbatim after its checkpoint, and what it shadows. */
export interface FoldCarry {
  /** Seqs carried verbatim right after the checkpoint, in surface order (pins and kept user messages). */
  readonly carriedSeqs: readonly number[]
  /** Seqs the checkpoint shadows, in surface order: the region without the carried ones. */
  readonly shadowedSeqs: readonly number[]
  readonly carriedTokens: number
  readonly shadowedTokens: number
  /**
   * Whether the fold would shadow something besides a leading checkpoint: summarizing a
   * checkpoint alone cannot shrink it, so such a region is not worth a summary call.
   */
  readonly foldsHistory: boolean
}

/**
 * Which user-authored messages a fold keeps: the user's task (the first user-authored message on
 * the surface), then the newest ones of the region, while their prices fit `maxTokens` together.
 */
export interface KeepUserMessages {
  readonly maxTokens: number
}

/**
 * The kept user messages' budget for `region`: `maxTokens`, but at most half the region's tokens,
 * so a fold always summarizes at least half of what it covers besides its pins. A session of user
 * messages alone, folded on an overflow whose real window is smaller than the declared one, would
 * otherwise carry almost its whole head and never shrink.
 */
function keptBudget(region: SurfaceRegion, price: (position: number) => number, keep: KeepUserMessages): number {
  let regionTokens = 0
  for (let position = region.start; position <= region.end; position++) regionTokens += price(position)
  return Math.min(keep.maxTokens, Math.floor(regionTokens / 2))
}

/**
 * Plans what a fold of `region` carries past its checkpoint:
 *
 * - every pinned node of the region (`pinnedSeqs`), with the rest of its tool exchange: a pinned
 *   tool result brings the assistant message that called it, and a carried assistant message
 *   brings the results of all its calls, so no carried result ever loses its call (the region
 *   ends at a balanced cut, so they are all inside it);
 * - with `keepUserMessages`, user-authored messages of the region (source `user`: not tool
 *   results, checkpoints or plugin messages): first the user's task, the first user-authored
 *   message on the surface (a carried one keeps that place fold after fold), when it is in the
 *   region and fits the budget (`maxTokens`, at most half the region's tokens); then the newest
 *   ones, walking back while their prices fit the rest of the budget together; the first one
 *   that does not fit ends the walk, so what is kept besides the task is always the most recent run.
 *
 * A leading checkpoint is never carried (the new summary merges it).
 *
 * @param price token price of the surface node at a position, as the next request carries it.
 */
export function planFoldCarry(
  session: Session,
  region: SurfaceRegion,
  price: (position: number) => number,
  keepUserMessages?: KeepUserMessages,
): FoldCarry {
  const nodes = session.surface.nodes
  const messages = session.deriveMessages()
  const pinned = pinnedSeqs(session)
  const carried = new Set<number>()
  for (let position = region.start; position <= region.end; position++) {
    if (pinned.has(nodes[position] as number) && !isCheckpointMessage(messages[position] as Message))
      carried.add(position)
  }
  addToolExchanges(messages, region, carried)
  if (keepUserMessages) {
    const budget = keptBudget(region, price, keepUserMessages)
    let used = 0
    const task = messages.findIndex(isUserAuthored)
    if (task >= region.start && task <= region.end && !carried.has(task) && price(task) <= budget) {
      used += price(task)
      carried.add(task)
    }
    for (let position = region.end; position >= region.start; position--) {
      const message = messages[position] as Message
      if (carried.has(position) || !isUserAuthored(message)) continue
      const tokens = price(position)
      if (used + tokens > budget) break
      used += tokens
      carried.add(position)
    }
  }
  const carriedSeqs: number[] = []
  const shadowedSeqs: number[] = []
  let carriedTokens = 0
  let shadowedTokens = 0
  let foldsHistory = false
  for (let position = region.start; position <= region.end; position++) {
    const seq = nodes[position] as number
    if (carried.has(position)) {
      carriedSeqs.push(seq)
      carriedTokens += price(position)
    } else {
      shadowedSeqs.push(seq)
      shadowedTokens += price(position)
      if (!(position === 0 && isCheckpointMessage(messages[position] as Message))) foldsHistory = true
    }
  }
  return Object.freeze({
    carriedSeqs: Object.freeze(carriedSeqs),
    shadowedSeqs: Object.freeze(shadowedSeqs),
    carriedTokens,
    shadowedTokens,
    foldsHistory,
  })
}

/** A message the user wrote: not a tool result, a checkpoint or a plugin's message. */
function isUserAuthored(message: Message): boolean {
  return message.role === 'user' && message.source.kind === 'user'
}

/**
 * Closes `carried` (positions) over tool exchanges inside `region`: results bring their call,
 * calls bring all their results. A result belongs to the nearest earlier message that made its
 * call, because some servers reuse call ids (`call_0`) across replies.
 */
function addToolExchanges(messages: readonly Message[], region: SurfaceRegion, carried: Set<number>): void {
  const latestCaller = new Map<string, number>()
  const callerOfResult = new Map<number, number>()
  for (let position = region.start; position <= region.end; position++) {
    for (const block of (messages[position] as Message).content) {
      if (block.type === 'tool-call') latestCaller.set(block.id, position)
      else if (block.type === 'tool-result' && latestCaller.has(block.toolCallId))
        callerOfResult.set(position, latestCaller.get(block.toolCallId) as number)
    }
  }
  for (const position of carried) {
    const caller = callerOfResult.get(position)
    if (caller !== undefined) carried.add(caller)
  }
  for (const [position, caller] of callerOfResult) if (carried.has(caller)) carried.add(position)
}
