import type { Context } from '@cordisjs/core'
import type { Parsed } from '@warmfold/llm'
import { WARMFOLD_PLUGIN } from '@warmfold/llm'
import { adapterPluginInfo, LlmAdapterPlugin } from '@warmfold/llm/adapter'
import { ChatCompletionsAdapter } from './chat-completions-adapter.ts'
import type { OpenAICompatibleConfig, OpenAICompatibleConfigParser } from './config.ts'
import { parseOpenAICompatibleConfig, resolveApiKey } from './config.ts'

/**
 * The cordis plugin: builds a {@link ChatCompletionsAdapter} from its config and registers it
 * with `ctx.llm` under `config.provider`. The registration is undone when the plugin unloads.
 * Mount it once per endpoint (e.g. once for `deepseek`, once for a local `llamacpp`); each
 * mount is independent and unloads on its own.
 *
 * Load fails (cordis `internal/error`, the plugin stays unloaded) on an invalid config, on an
 * `apiKeyEnv` whose variable is unset (the message names the variable, never a value), and on
 * a provider id that is already registered.
 */
export class OpenAICompatibleAdapter extends LlmAdapterPlugin<ChatCompletionsAdapter> {
  static readonly [WARMFOLD_PLUGIN] = adapterPluginInfo('@warmfold/llm-openai-compatible')
  /** One plugin, several endpoints: each `ctx.plugin(OpenAICompatibleAdapter, config)` is its own adapter. */
  static reusable = true

  constructor(ctx: Context, config: Parsed<OpenAICompatibleAdapter.Config>) {
    const { apiKey: _apiKey, apiKeyEnv: _apiKeyEnv, ...rest } = config
    const adapter = new ChatCompletionsAdapter({
      ...rest,
      apiKey: resolveApiKey(config),
      onWarning: (message) => ctx.emit('internal/warning', `OpenAICompatibleAdapter (${config.provider}): ${message}`),
    })
    super(ctx, config, adapter)
  }
}

export namespace OpenAICompatibleAdapter {
  /**
   * The resolved config (see {@link OpenAICompatibleConfig}); hosts pass `OpenAICompatibleOptions`.
   * Unknown keys are rejected.
   */
  export type Config = OpenAICompatibleConfig
  export const Config: OpenAICompatibleConfigParser = parseOpenAICompatibleConfig
}
