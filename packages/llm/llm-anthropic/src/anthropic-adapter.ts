import type { Context } from '@cordisjs/core'
import type { ConfigParser, Parsed } from '@warmfold/llm'
import { WARMFOLD_PLUGIN } from '@warmfold/llm'
import { adapterPluginInfo, LlmAdapterPlugin } from '@warmfold/llm/adapter'
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
export class AnthropicAdapter extends LlmAdapterPlugin<AnthropicLlmAdapter> {
  static readonly [WARMFOLD_PLUGIN] = adapterPluginInfo('@warmfold/llm-anthropic', 'anthropic')

  constructor(ctx: Context, config: Parsed<AnthropicAdapter.Config>) {
    super(ctx, config, new AnthropicLlmAdapter(config, resolveApiKey(config)))
  }
}

export namespace AnthropicAdapter {
  /** The parsed config; see the README's config table. */
  export type Config = AnthropicAdapterConfig
  /** Validates the config and fills its defaults; unknown keys are rejected. */
  export const Config: ConfigParser<Config> = parseAnthropicConfig
}
