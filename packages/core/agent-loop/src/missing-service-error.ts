import type { Context } from '@cordisjs/core'
import { PluginLoadError, pluginFailures } from '@warmfold/llm'

const MISSING_SERVICE_BRAND = Symbol.for('warmfold.missing-service.error')

/** A service a plugin needs, and how a host provides it. */
export interface ServiceRequirement {
  /** The Context property, e.g. `tokenMeter`. */
  readonly service: string
  /** The package that provides it, e.g. `@warmfold/token-meter`. */
  readonly packageName: string
  /** The plugin class to mount from that package, e.g. `TokenMeter`. */
  readonly plugin: string
}

const requirement = (service: string, packageName: string, plugin: string): ServiceRequirement =>
  Object.freeze({ service, packageName, plugin })

/** `ctx.llm`: the model runtime. */
export const LLM_RUNTIME_SERVICE = requirement('llm', '@warmfold/llm', 'LlmRuntime')
/** `ctx.sessions`: the session store. */
export const SESSION_STORE_SERVICE = requirement('sessions', '@warmfold/session', 'SessionStore')
/** `ctx.tools`: the tool registry. */
export const TOOL_REGISTRY_SERVICE = requirement('tools', '@warmfold/agent-loop', 'ToolRegistry')

/**
 * A plugin was used while a service it needs is not mounted in its Context. cordis keeps a
 * plugin whose required `inject` is missing pending without a word, so warmfold plugins declare
 * such services optional and throw this at first use instead, naming what to mount.
 * `code` is `SERVICE_MISSING` (also on a `turn/end` the failure ended). Recognise it with
 * {@link MissingServiceError.isInstance}.
 */
export class MissingServiceError extends Error {
  override readonly name = 'MissingServiceError'
  readonly code = 'SERVICE_MISSING'
  /** The Context property that is missing, e.g. `tokenMeter`. */
  readonly service: string
  /** The package that provides it. */
  readonly packageName: string
  /** The plugin class to mount. */
  readonly plugin: string
  /** Who needed it, e.g. `BasicCompactionEngine`. */
  readonly requiredBy: string
  readonly [MISSING_SERVICE_BRAND] = true

  constructor(requirement: ServiceRequirement, requiredBy: string) {
    super(
      `${requiredBy} needs ctx.${requirement.service}, which is not mounted in its Context: ` +
        `mount ${requirement.packageName} (ctx.plugin(${requirement.plugin})) in the same Context`,
    )
    this.service = requirement.service
    this.packageName = requirement.packageName
    this.plugin = requirement.plugin
    this.requiredBy = requiredBy
  }

  /** Whether `value` is a `MissingServiceError` from any copy of this package. */
  static isInstance(value: unknown): value is MissingServiceError {
    return (
      typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[MISSING_SERVICE_BRAND] === true
    )
  }
}

/**
 * Checks that every service in `requirements` is mounted where `ctx` sees it.
 * @throws PluginLoadError naming the plugin and its error when the service's plugin is mounted
 *   but failed to load (a refused config, a throwing constructor): "mount it" would be wrong
 *   advice; MissingServiceError for the first service no plugin provides.
 */
export function requireServices(ctx: Context, requiredBy: string, requirements: readonly ServiceRequirement[]): void {
  for (const requirement of requirements) {
    // `ctx.get` reads the slot without the "not declared as inject" warning a property read may give.
    const value: unknown = ctx.get(requirement.service)
    if (value !== undefined && value !== null) continue
    const provides = `ctx.${requirement.service}`
    const failed = pluginFailures(ctx).filter((failure) => failure.warmfold?.provides === provides)
    if (failed.length > 0) throw new PluginLoadError(failed)
    throw new MissingServiceError(requirement, requiredBy)
  }
}
