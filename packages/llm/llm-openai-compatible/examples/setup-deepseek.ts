import type { Context } from '@cordisjs/core'
import { OpenAICompatibleAdapter } from '@warmfold/llm-openai-compatible'

export function mountDeepSeek(ctx: Context, baseURL = 'https://api.deepseek.com') {
  ctx.plugin(OpenAICompatibleAdapter, {
    provider: 'deepseek',
    baseURL,
    apiKeyEnv: 'DEEPSEEK_API_KEY',
    dialect: 'deepseek',
    models: {
      'deepseek-v4-flash': {
        contextWindow: 131072,
        defaultMaxTokens: 8192,
        efforts: ['off', 'high', 'max'],
        defaultEffort: 'high',
      },
    },
  })
}
