import type { Context } from '@cordisjs/core'

/**
 * A static every warmfold plugin class carries (`static [WARMFOLD_PLUGIN] = { … }`), so that a
 * plugin that failed to load can be named by its package and role. A `Symbol.for` key, so two
 * copies of this package agree on it.
 */
export const WARMFOLD_PLUGIN: unique symbol = Symbol.for('warmfold.plugin') as never

/**
 * `WarmfoldPluginInfo.provides` of an LLM adapter plugin: the runtime names such plugins
 * that failed when a provider has no adapter.
 */
export const LLM_ADAPTER_ROLE = 'llm adapter'

/** What a warmfold plugin class says about itself through {@link WARMFOLD_PLUGIN}. */
export interface WarmfoldPluginInfo {
  /** The npm package, e.g. `@warmfold/llm-anthropic`. */
  readonly packageName: string
  /** What it provides: a service (`ctx.compaction`) or {@link LLM_ADAPTER_ROLE}. */
  readonly provides: string
  /** For an LLM adapter: the provider id it registers when its config names none. */
  readonly defaultProvider?: string
}

/** A plugin mounted in a Context that failed to load: its config was refused or it threw. */
export interface PluginFailure {
  /** The plugin's class or function name, e.g. `AnthropicAdapter`. */
  readonly plugin: string
  /** What a warmfold plugin says about itself; absent for other plugins. */
  readonly warmfold?: WarmfoldPluginInfo
  /** The thrown value (a config error is a `TypeError` naming the key). */
  readonly error: unknown
  /** `<package> (<plugin>) failed to load: <error message>`. */
  readonly message: string
}

interface ScopeView {
  readonly plugin?: object | null
  readonly name?: string
  readonly error?: unknown
  readonly uid: number | null
  readonly isActive: boolean
  readonly ctx: Context
  readonly children?: readonly ScopeView[]
  readonly inject?: Readonly<Record<string, { readonly required: boolean }>>
}

/**
 * Every plugin mounted anywhere in `ctx`'s app that failed to load and is still mounted (cordis
 * keeps a failed plugin in its registry, inactive, until it is disposed), warmfold plugins
 * first: a config its parser refused, a constructor that threw (say, an unset API key
 * variable), or a warmfold plugin still waiting for a service it requires that no plugin
 * provides (cordis keeps such a plugin pending without a word).
 *
 * A refused config is recorded when `ctx.plugin` returns, a throwing constructor only once the
 * load task has run: at start-up call {@link assertPluginsLoaded}, which waits for pending loads
 * first.
 */
export function pluginFailures(ctx: Context): PluginFailure[] {
  const failures: PluginFailure[] = []
  for (const runtime of ctx.registry.values()) {
    const main = runtime as unknown as ScopeView
    // The app's root context is an entry too, with no plugin.
    if (!main.plugin || main.uid === null) continue
    const warmfold = (main.plugin as Record<symbol, WarmfoldPluginInfo | undefined>)[WARMFOLD_PLUGIN]
    const error = loadError(main) ?? (warmfold ? missingService(main) : undefined)
    if (error === undefined) continue
    // An object plugin's registry key is its `apply`; its own `name` is on the runtime.
    const name = main.name || (main.plugin as { name?: string }).name || '(anonymous plugin)'
    const reason = error instanceof Error ? error.message : String(error)
    failures.push(
      Object.freeze({
        plugin: name,
        ...(warmfold ? { warmfold } : {}),
        error,
        message: `${warmfold ? `${warmfold.packageName} (${name})` : name} failed to load: ${reason}`,
      }),
    )
  }
  return failures.toSorted((a, b) => Number(!a.warmfold) - Number(!b.warmfold))
}

/** The error of the plugin's main scope or of one of its forks, if any. */
function loadError(main: ScopeView): unknown {
  for (const scope of [main, ...(main.children ?? [])]) {
    if (scope.uid !== null && scope.error !== undefined && scope.error !== null) return scope.error
  }
  return undefined
}

/** An inactive plugin's first required service that its context does not hold, as an Error. */
function missingService(main: ScopeView): Error | undefined {
  if (main.isActive) return undefined
  for (const [name, meta] of Object.entries(main.inject ?? {})) {
    if (meta.required && (main.ctx.get(name) === undefined || main.ctx.get(name) === null)) {
      return new Error(
        `it requires ctx.${name}, which no plugin in its Context provides, so cordis keeps it waiting (mount the ` +
          `plugin that provides ctx.${name})`,
      )
    }
  }
  return undefined
}

const PLUGIN_LOAD_ERROR = Symbol.for('warmfold.plugin-load.error')

/** Plugins of a host's Context failed to load; {@link failures} lists them. */
export class PluginLoadError extends Error {
  override readonly name = 'PluginLoadError'
  readonly code = 'PLUGIN_LOAD_FAILED'
  readonly failures: readonly PluginFailure[]
  readonly [PLUGIN_LOAD_ERROR] = true

  constructor(failures: readonly PluginFailure[]) {
    super(
      `${failures.length} plugin${failures.length === 1 ? '' : 's'} failed to load: ` +
        `${failures.map((failure) => failure.message).join('; ')}`,
      { cause: failures[0]?.error },
    )
    this.failures = Object.freeze([...failures])
  }

  /** Whether `value` is a `PluginLoadError` from any copy of this package. */
  static isInstance(value: unknown): value is PluginLoadError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[PLUGIN_LOAD_ERROR] === true
  }
}

/**
 * The start-up check of a host: waits for pending plugin loads, then throws when any plugin
 * mounted in `ctx`'s app failed to load, so a host refuses to run with a broken stack instead of
 * running without compaction or without a model.
 * @throws PluginLoadError listing every failure (plugin, package, reason).
 */
export async function assertPluginsLoaded(ctx: Context): Promise<void> {
  await ctx.lifecycle.flush()
  const failures = pluginFailures(ctx)
  if (failures.length > 0) throw new PluginLoadError(failures)
}
