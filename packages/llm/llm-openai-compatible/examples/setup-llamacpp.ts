import type { Context } from '@cordisjs/core'
import { OpenAICompatibleAdapter } from '@warmfold/llm-openai-compatible'

export function mountLlamaCpp(ctx: Context, baseURL = 'http://127.0.0.1:8080/v1') {
  ctx.plugin(OpenAICompatibleAdapter, {
    provider: 'llamacpp',
    baseURL,
    dialect: 'llamacpp',
    models: { local: { contextWindow: 16384, defaultMaxTokens: 2048 } },
  })
}
