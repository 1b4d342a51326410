import type { Context } from '@cordisjs/core'
import type { ConfigParser, Parsed } from '@warmfold/llm'
import { WARMFOLD_PLUGIN } from '@warmfold/llm'
import { adapterPluginInfo, LlmAdapterPlugin } from '@warmfold/llm/adapter'
import { AiSdkLlmAdapter } from './ai-sdk-llm-adapter.ts'
import type { AiSdkAdapterConfig } from './config.ts'
import { parseAiSdkConfig } from './config.ts'

/**
 * The cordis plugin: builds an {@link AiSdkLlmAdapter} from AI SDK model instances and registers
 * it with `ctx.llm` under `config.provider`; the registration is undone when the plugin unloads.
 * The config holds live objects (the models), so it is written in code, not in a JSON/YAML file.
 */
export class AiSdkAdapter extends LlmAdapterPlugin<AiSdkLlmAdapter> {
  static readonly [WARMFOLD_PLUGIN] = adapterPluginInfo('@warmfold/llm-ai-sdk')

  constructor(ctx: Context, config: Parsed<AiSdkAdapter.Config>) {
    super(ctx, config, new AiSdkLlmAdapter(config))
  }
}

export namespace AiSdkAdapter {
  /** The parsed config; see the README's config table. */
  export type Config = AiSdkAdapterConfig
  /** Validates the config by hand and fills its defaults; unknown keys are rejected. */
  export const Config: ConfigParser<Config> = parseAiSdkConfig
}
