import type { Context } from '@cordisjs/core'
import type { ConfigParser, Parsed, WarmfoldPluginInfo } from '@warmfold/llm'
import { WARMFOLD_PLUGIN } from '@warmfold/llm'
import { LLM_ADAPTER_ROLE } from '@warmfold/llm/adapter'
import { AnthropicLlmAdapter } from './anthropic-llm-adapter.ts'
import type { AnthropicAdapterConfig } from './config.ts'
import { parseAnthropicConfig, resolveApiKey } from './config.ts'

/**
 * The cordis plugin: reads the API key, builds an {@link AnthropicLlmAdapter} and registers it
 * with `ctx.llm` under `config.provider`. The registration is undone when the plugin unloads.
 *
 * Loading fails (cordis reports `internal/error`, nothing is registered) when the config is
 * invalid or the key's environment variable is unset; the message names the key or variable,
 * never a key value.
 */
export class AnthropicAdapter {
  static readonly [WARMFOLD_PLUGIN]: WarmfoldPluginInfo = {
    packageName: '@warmfold/llm-anthropic',
    provides: LLM_ADAPTER_ROLE,
    defaultProvider: 'anthropic',
  }
  static inject = ['llm']

  /** The registered adapter. */
  readonly adapter: AnthropicLlmAdapter

  constructor(ctx: Context, config: Parsed<AnthropicAdapter.Config>) {
    this.adapter = new AnthropicLlmAdapter(config, resolveApiKey(config))
    ctx.llm.registerAdapter(config.provider, this.adapter)
  }
}

export namespace AnthropicAdapter {
  /** The parsed config; see the README's config table. */
  export type Config = AnthropicAdapterConfig
  /** Validates the config and fills its defaults; unknown keys are rejected. */
  export const Config: ConfigParser<Config> = parseAnthropicConfig
}
