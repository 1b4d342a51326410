import type { Message } from '@warmfold/llm'
import type { Session } from '@warmfold/session'

/**
 * Balanced cut positions of a message list: `result[k]` is true when cutting between
 * `messages[k - 1]` and `messages[k]` separates no tool call from its result, i.e. every tool
 * call before the cut has its result before the cut too. `result[0]` is always true;
 * `result[n]` is false while a call is still waiting for its result (its result will be
 * appended after the cut). A result whose call is not before it opens nothing.
 */
export function balancedCuts(messages: readonly Message[]): boolean[] {
  const cuts = [true]
  const open = new Set<string>()
  for (const message of messages) {
    for (const block of message.content) {
      if (block.type === 'tool-call') open.add(block.id)
      else if (block.type === 'tool-result') open.delete(block.toolCallId)
    }
    cuts.push(open.size === 0)
  }
  return cuts
}

const cache = new WeakMap<Session, { generation: number; length: number; cuts: boolean[] }>()

function cutsOf(session: Session): boolean[] {
  const { replaceGeneration, nodes } = session.surface
  const cached = cache.get(session)
  if (cached && cached.generation === replaceGeneration && cached.length === nodes.length) return cached.cuts
  const cuts = balancedCuts(session.deriveMessages())
  cache.set(session, { generation: replaceGeneration, length: nodes.length, cuts })
  return cuts
}

function positionOf(session: Session, seq: number): number {
  const position = session.surface.nodes.indexOf(seq)
  if (position === -1) throw new RangeError(`seq ${seq} is not on the surface of session ${session.id}`)
  return position
}

/** Whether a cut at surface position `position` (before `nodes[position]`) is balanced. */
export function isBalancedCut(session: Session, position: number): boolean {
  const cuts = cutsOf(session)
  if (!Number.isInteger(position) || position < 0 || position >= cuts.length) {
    throw new RangeError(`cut position ${position} is outside 0..${cuts.length - 1} for session ${session.id}`)
  }
  return cuts[position] as boolean
}

/** Whether cutting just before surface node `seq` separates no tool call from its result. */
export function toolPairingBalancedBefore(session: Session, seq: number): boolean {
  return isBalancedCut(session, positionOf(session, seq))
}

/** Whether cutting just after surface node `seq` separates no tool call from its result. */
export function toolPairingBalancedAfter(session: Session, seq: number): boolean {
  return isBalancedCut(session, positionOf(session, seq) + 1)
}
