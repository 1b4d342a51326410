import type { Context } from '@cordisjs/core'
import type { ConfigParser, Parsed } from '@warmfold/llm'
import { WARMFOLD_PLUGIN } from '@warmfold/llm'
import { adapterPluginInfo, LlmAdapterPlugin } from '@warmfold/llm/adapter'
import type { OpenAIResponsesConfig } from './config.ts'
import { parseResponsesConfig, resolveApiKey } from './config.ts'
import { ResponsesLlmAdapter } from './responses-llm-adapter.ts'

/**
 * The cordis plugin: reads the API key, builds a {@link ResponsesLlmAdapter} and registers it with
 * `ctx.llm` under `config.provider`. The registration is undone when the plugin unloads.
 *
 * Loading fails (cordis reports `internal/error`, nothing is registered) when the config is invalid
 * or the key's environment variable is unset; the message names the key or variable, never a value.
 */
export class OpenAIResponsesAdapter extends LlmAdapterPlugin<ResponsesLlmAdapter> {
  static readonly [WARMFOLD_PLUGIN] = adapterPluginInfo('@warmfold/llm-openai-responses', 'openai')

  constructor(ctx: Context, config: Parsed<OpenAIResponsesAdapter.Config>) {
    super(ctx, config, new ResponsesLlmAdapter(config, resolveApiKey(config)))
  }
}

export namespace OpenAIResponsesAdapter {
  /** The parsed config; see the README's config table. */
  export type Config = OpenAIResponsesConfig
  /** Validates the config and fills its defaults; unknown keys are rejected. */
  export const Config: ConfigParser<Config> = parseResponsesConfig
}
