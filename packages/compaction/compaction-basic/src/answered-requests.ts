import type { Context } from '@cordisjs/core'
import type { RequestHookContext } from '@warmfold/agent-loop'
import type { GenerateOptions, LlmFinish, Message } from '@warmfold/llm'
import type { Session } from '@warmfold/session'

/** A conversation request a provider answered: its cache entry exists, so a call that replays it reads it. */
export interface AnsweredRequest {
  /** The surface seqs its messages were derived from, in order (one per message). */
  readonly nodes: readonly number[]
  /** Its messages exactly as sent. */
  readonly messages: readonly Message[]
  /** `surface.replaceGeneration` when it was sent. */
  readonly generation: number
}

/**
 * The last answered conversation request of each session, in this process: what a summary call
 * replays (rule C3) and a background fold snapshots. A request counts once its response finished
 * without an error (an entry exists only once a response has begun), so a request the provider
 * rejected (e.g. as too long) is never replayed.
 */
export class AnsweredRequests {
  private readonly sessions = new Map<string, Session>()
  private readonly sent = new WeakMap<Session, AnsweredRequest>()
  private readonly answered = new WeakMap<Session, AnsweredRequest>()

  constructor(ctx: Context) {
    ctx.on('agent/request', ({ agent }: RequestHookContext) => void this.sessions.set(agent.session.id, agent.session))
    ctx.on('session/close', (session: Session) => void this.sessions.delete(session.id))
    ctx.on('llm/stream', (options: GenerateOptions) => {
      const session = this.conversationSession(options)
      // The loop sends the surface as it is: one message per node.
      if (!session || options.messages.length !== session.surface.nodes.length) return
      this.sent.set(session, {
        nodes: [...session.surface.nodes],
        messages: options.messages,
        generation: session.surface.replaceGeneration,
      })
    })
    ctx.on('llm/finish', (options: GenerateOptions, outcome: LlmFinish) => {
      const session = this.conversationSession(options)
      const sent = session && this.sent.get(session)
      if (!session || sent?.messages !== options.messages) return
      if (outcome.finishReason !== 'error' && outcome.finishReason !== 'aborted') this.answered.set(session, sent)
    })
  }

  /** The session's last answered conversation request, if this process sent one. */
  last(session: Session): AnsweredRequest | undefined {
    return this.answered.get(session)
  }

  private conversationSession(options: GenerateOptions): Session | undefined {
    if (options.purpose !== 'conversation' || options.sessionId === undefined) return undefined
    return this.sessions.get(options.sessionId)
  }
}

/**
 * Whether `request` still holds the surface's nodes `0..end` (the same seqs, so the same bytes):
 * a summary of those nodes can then replay the request whole and read its cache entry.
 */
export function holdsHead(request: AnsweredRequest, session: Session, end: number): boolean {
  const nodes = session.surface.nodes
  if (end >= request.nodes.length || end >= nodes.length) return false
  for (let position = 0; position <= end; position++) if (request.nodes[position] !== nodes[position]) return false
  return true
}
