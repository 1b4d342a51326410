import type { Context } from '@cordisjs/core'
import type { ConfigParser, Parsed } from '@warmfold/llm'
import { WARMFOLD_PLUGIN } from '@warmfold/llm'
import { adapterPluginInfo, LlmAdapterPlugin } from '@warmfold/llm/adapter'
import type { GoogleAdapterConfig } from './config.ts'
import { parseGoogleConfig, resolveApiKey } from './config.ts'
import { GoogleLlmAdapter } from './google-llm-adapter.ts'

/**
 * The cordis plugin: reads the API key, builds a {@link GoogleLlmAdapter} and registers it with
 * `ctx.llm` under `config.provider`. The registration is undone when the plugin unloads.
 *
 * Loading fails (cordis reports `internal/error`, nothing is registered) when the config is
 * invalid or the key's environment variable is unset; the message names the key or variable,
 * never a key value.
 */
export class GoogleAdapter extends LlmAdapterPlugin<GoogleLlmAdapter> {
  static readonly [WARMFOLD_PLUGIN] = adapterPluginInfo('@warmfold/llm-google', 'google')

  constructor(ctx: Context, config: Parsed<GoogleAdapter.Config>) {
    super(ctx, config, new GoogleLlmAdapter(config, resolveApiKey(config)))
  }
}

export namespace GoogleAdapter {
  /** The parsed config; see the README's config table. */
  export type Config = GoogleAdapterConfig
  /** Validates the config and fills its defaults; unknown keys are rejected. */
  export const Config: ConfigParser<Config> = parseGoogleConfig
}
