import type { Context } from '@cordisjs/core'
import { Service } from '@cordisjs/core'
import type { ConfigParser } from '@warmfold/llm'
import { strictConfig } from '@warmfold/llm'
import { SessionError } from '@warmfold/session'
import Schema from 'schemastery'
import { Agent } from './agent.ts'
import type { AgentOptions } from './agent-options.ts'
import { validateAgentOptions } from './agent-options.ts'

declare module '@cordisjs/core' {
  interface Context {
    agentLoop: AgentLoop
  }
}

/**
 * The `ctx.agentLoop` service: creates agents bound to a session. Every conversation request
 * is `{ ...loggedHeader.config, system, tools, messages: session.deriveMessages() }`, so the
 * prompt only grows by appending between logged rewrites.
 */
export class AgentLoop extends Service<AgentLoop.Config> {
  static [Service.provide] = 'agentLoop'
  static [Service.immediate]: boolean = true
  static inject = ['llm', 'sessions', 'tools']

  private readonly owner: Context

  constructor(ctx: Context, config: AgentLoop.Config) {
    super(ctx, config)
    this.owner = ctx
  }

  /**
   * An agent for session `sessionId`: the session is opened when it exists and created
   * otherwise. On a session with history, the `agent/resume` hook runs and a turn the previous
   * process left open is closed with `turn/end { reason: 'interrupted' }` (then flushed); a
   * failure there is reported on `agent.lastError`, never thrown.
   * @throws TypeError naming a bad option; SessionError from the store.
   */
  async create(sessionId: string, options: AgentOptions): Promise<Agent> {
    const validated = validateAgentOptions(options)
    const session = await this.owner.sessions.open(sessionId).catch((error: unknown) => {
      if (SessionError.isInstance(error) && error.code === 'NOT_FOUND') return this.owner.sessions.create(sessionId)
      throw error
    })
    const agent = new Agent(this.owner, session, validated)
    await agent.resume()
    return agent
  }
}

export namespace AgentLoop {
  /** `ctx.agentLoop` has no settings; unknown keys are rejected. */
  export type Config = Record<string, never>
  export const Config: ConfigParser<Config> = strictConfig('AgentLoop', Schema.object({})) as ConfigParser<Config>
}
