import type { Context } from '@cordisjs/core'
import type { LlmAdapter } from './llm-adapter.ts'
import type { LlmRuntime } from './llm-runtime.ts'
import type { WarmfoldPluginInfo } from './plugin-failures.ts'
import { LLM_ADAPTER_ROLE } from './plugin-failures.ts'

/**
 * The cordis plugin of an adapter package: registers the adapter its subclass builds with
 * `ctx.llm` under `config.provider`; the registration is undone when the plugin unloads.
 */
export abstract class LlmAdapterPlugin<A extends LlmAdapter> {
  static inject = ['llm']

  /** The registered adapter. */
  readonly adapter: A

  constructor(ctx: Context, config: { readonly provider: string }, adapter: A) {
    this.adapter = adapter
    // Typed here, not through the Context augmentation: the `/adapter` entry's declarations are built alone.
    const llm: LlmRuntime = (ctx as Context & { llm: LlmRuntime }).llm
    llm.registerAdapter(config.provider, adapter)
  }
}

/** The `[WARMFOLD_PLUGIN]` info of an adapter plugin: it provides {@link LLM_ADAPTER_ROLE}. */
export function adapterPluginInfo(packageName: string, defaultProvider?: string): WarmfoldPluginInfo {
  return { packageName, provides: LLM_ADAPTER_ROLE, ...(defaultProvider === undefined ? {} : { defaultProvider }) }
}
