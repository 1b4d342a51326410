import type { Context } from '@cordisjs/core'
import { Service } from '@cordisjs/core'
import type { ConfigParser, Parsed, WarmfoldPluginInfo } from '@warmfold/llm'
import { PluginLoadError, pluginFailures, strictConfig, WARMFOLD_PLUGIN } from '@warmfold/llm'
import { SessionError } from '@warmfold/session'
import Schema from 'schemastery'
import { Agent } from './agent.ts'
import type { AgentOptions } from './agent-options.ts'
import { validateAgentOptions } from './agent-options.ts'
import {
  LLM_RUNTIME_SERVICE,
  requireServices,
  SESSION_STORE_SERVICE,
  TOOL_REGISTRY_SERVICE,
} from './missing-service-error.ts'

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
  static readonly [WARMFOLD_PLUGIN]: WarmfoldPluginInfo = {
    packageName: '@warmfold/agent-loop',
    provides: 'ctx.agentLoop',
  }
  static [Service.provide] = 'agentLoop'
  static [Service.immediate]: boolean = true
  // Needed, but declared optional: cordis keeps a plugin with a missing required inject pending
  // without a word, so a forgotten plugin would leave `ctx.agentLoop` silently undefined.
  // `create` and every step check them instead and name the package to mount.
  static inject = { llm: { required: false }, sessions: { required: false }, tools: { required: false } }

  private readonly owner: Context

  constructor(ctx: Context, config: Parsed<AgentLoop.Config>) {
    super(ctx, config)
    this.owner = ctx
  }

  /**
   * An agent for session `sessionId`: the session is opened when it exists and created
   * otherwise. On a session with history, the `agent/resume` hook runs and a turn the previous
   * process left open is closed with `turn/end { reason: 'interrupted' }` (then flushed); a
   * failure there is reported on `agent.lastError`, never thrown.
   * @throws TypeError naming a bad option; MissingServiceError when `ctx.sessions`, `ctx.llm`
   * or `ctx.tools` is not mounted (it names the package); PluginLoadError when a warmfold plugin
   * of the app failed to load (a refused config, a throwing constructor, a missing required
   * service), listing each (when the plugin of `ctx.sessions`, `ctx.llm` or `ctx.tools` is the one
   * that failed, the error names its failure instead of asking to mount it); SessionError from the
   * store.
   */
  async create(sessionId: string, options: AgentOptions): Promise<Agent> {
    const validated = validateAgentOptions(options)
    requireServices(this.owner, 'AgentLoop', [SESSION_STORE_SERVICE, LLM_RUNTIME_SERVICE, TOOL_REGISTRY_SERVICE])
    // A warmfold plugin that failed to load means a broken stack (no compaction, no model, no
    // ledger) that would otherwise run quietly; the host fixes the config or disposes the plugin.
    const failed = pluginFailures(this.owner).filter((failure) => failure.warmfold)
    if (failed.length > 0) throw new PluginLoadError(failed)
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
