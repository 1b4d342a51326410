import { Context } from '@cordisjs/core'
import { createUserMessage, LlmRuntime, textOf } from '@warmfold/llm'
import { OpenAICompatibleAdapter } from '@warmfold/llm-openai-compatible'

export async function main(baseURL = 'https://api.deepseek.com') {
  const ctx = new Context()
  await ctx.start()
  ctx.plugin(LlmRuntime)
  ctx.plugin(OpenAICompatibleAdapter, {
    provider: 'deepseek', // the id requests use: { provider: 'deepseek', model: ... }
    baseURL,
    apiKeyEnv: 'DEEPSEEK_API_KEY', // read once, at load
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

  const result = await ctx.llm.generate({
    provider: 'deepseek',
    model: 'deepseek-v4-flash',
    messages: [createUserMessage('Hi')],
  })
  await ctx.stop()
  return { text: textOf(result.content), usage: result.usage } // usage: { inputTokens, cacheReadTokens, outputTokens, … }
}
