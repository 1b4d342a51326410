import type { Context } from '@cordisjs/core'
import { Service } from '@cordisjs/core'
import type {
  ConfigParser,
  JsonObject,
  Parsed,
  ToolDefinition,
  ToolResultContent,
  WarmfoldPluginInfo,
} from '@warmfold/llm'
import {
  canonicalJson,
  deepFreeze,
  millisecondsRange,
  numberProblem,
  strictConfig,
  WARMFOLD_PLUGIN,
} from '@warmfold/llm'
import type { Session } from '@warmfold/session'
import Schema from 'schemastery'

declare module '@cordisjs/core' {
  interface Context {
    tools: ToolRegistry
  }
}

/** What a tool's `execute` receives besides its arguments. */
export interface ToolExecutionContext {
  /** Aborted when the turn is aborted or the tool times out. */
  readonly signal: AbortSignal
  readonly session: Session
  readonly toolCallId: string
}

/** A tool the model can call: its definition (`name` unique, as the model calls it) and how it runs. */
export interface Tool extends ToolDefinition {
  /** Milliseconds before the call is abandoned with an error result; default: the loop's `toolTimeoutMs`. */
  readonly timeoutMs?: number
  /** Runs the call; `args` is the parsed argument JSON. A string becomes one text block. */
  execute(
    args: unknown,
    context: ToolExecutionContext,
  ): Promise<string | readonly ToolResultContent[]> | string | readonly ToolResultContent[]
}

const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/

/**
 * The `ctx.tools` service: the tools offered to the model, in registration order. Definitions
 * are frozen with canonical JSON parameters, so the tool list's bytes never change unless the
 * set of tools does.
 */
export class ToolRegistry extends Service<ToolRegistry.Config> {
  static readonly [WARMFOLD_PLUGIN]: WarmfoldPluginInfo = { packageName: '@warmfold/agent-loop', provides: 'ctx.tools' }
  static [Service.provide] = 'tools'
  static [Service.immediate]: boolean = true

  private readonly tools = new Map<string, { tool: Tool; definition: ToolDefinition }>()
  private definitionsCache?: readonly ToolDefinition[]

  constructor(ctx: Context, config: Parsed<ToolRegistry.Config>) {
    super(ctx, config)
  }

  /**
   * Registers `tool`; undone by the returned disposer and when the registering plugin unloads.
   * @throws TypeError naming the tool when its name is invalid or already registered, or its
   *   `timeoutMs` is not an integer from 1 to `MAX_TIMER_MS`.
   */
  register(tool: Tool): () => void {
    if (typeof tool?.name !== 'string' || !TOOL_NAME.test(tool.name)) {
      throw new TypeError(
        `ctx.tools.register: tool name ${JSON.stringify(tool?.name)} must be 1-64 letters, digits, '_' or '-'`,
      )
    }
    if (this.tools.has(tool.name))
      throw new TypeError(`ctx.tools.register: a tool named "${tool.name}" is already registered`)
    if (typeof tool.execute !== 'function')
      throw new TypeError(`ctx.tools.register: tool "${tool.name}" has no execute function`)
    // A timer: above Node's limit the call would time out after 1 ms.
    const timeoutProblem =
      tool.timeoutMs === undefined ? undefined : numberProblem('timeoutMs', tool.timeoutMs, millisecondsRange(1))
    if (timeoutProblem) throw new TypeError(`ctx.tools.register: tool "${tool.name}": ${timeoutProblem}`)
    const definition = deepFreeze({
      name: tool.name,
      description: String(tool.description ?? ''),
      parameters: JSON.parse(canonicalJson(tool.parameters ?? { type: 'object' })) as JsonObject,
    })
    return this.ctx.effect(() => {
      this.tools.set(tool.name, { tool, definition })
      this.definitionsCache = undefined
      return () => {
        if (this.tools.get(tool.name)?.tool === tool) {
          this.tools.delete(tool.name)
          this.definitionsCache = undefined
        }
      }
    })
  }

  /** The tool called `name`, if registered. */
  get(name: string): Tool | undefined {
    return this.tools.get(name)?.tool
  }

  /** Registered tool names, in registration order. */
  names(): string[] {
    return [...this.tools.keys()]
  }

  /** Frozen definitions in registration order (the same array until the set changes). */
  definitions(): readonly ToolDefinition[] {
    this.definitionsCache ??= Object.freeze([...this.tools.values()].map((entry) => entry.definition))
    return this.definitionsCache
  }
}

export namespace ToolRegistry {
  /** `ctx.tools` has no settings; unknown keys are rejected. */
  export type Config = Record<string, never>
  export const Config: ConfigParser<Config> = strictConfig('ToolRegistry', Schema.object({})) as ConfigParser<Config>
}
