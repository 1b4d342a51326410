import type { Context } from '@cordisjs/core'
import { OpenAICompatibleAdapter } from '@warmfold/llm-openai-compatible'

export function mountOpenAI(ctx: Context, baseURL = 'https://api.openai.com/v1') {
  ctx.plugin(OpenAICompatibleAdapter, {
    provider: 'openai',
    baseURL,
    apiKeyEnv: 'OPENAI_API_KEY',
    dialect: 'openai',
    models: {
      'gpt-5.2': {
        contextWindow: 400000,
        defaultMaxTokens: 16384,
        efforts: ['low', 'medium', 'high'],
        defaultEffort: 'medium',
      },
    },
  })
}
