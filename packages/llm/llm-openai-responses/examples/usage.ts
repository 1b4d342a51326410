import { Context } from '@cordisjs/core'
import { createUserMessage, LlmRuntime, textOf } from '@warmfold/llm'
import { OpenAIResponsesAdapter } from '@warmfold/llm-openai-responses'

export async function main(baseURL = 'https://api.openai.com/v1') {
  const ctx = new Context()
  await ctx.start()
  ctx.plugin(LlmRuntime)
  ctx.plugin(OpenAIResponsesAdapter, {
    baseURL, // optional: the SDK's default (OPENAI_BASE_URL, else https://api.openai.com/v1), or a gateway
    models: {
      'gpt-5.2': {
        contextWindow: 400_000,
        defaultMaxTokens: 32_000,
        efforts: ['low', 'medium', 'high'],
        defaultEffort: 'medium',
        cacheRetention: '24h',
      },
    },
    // the key comes from OPENAI_API_KEY; also: reasoningSummary: 'detailed', promptCacheKey: 'off'
  })

  const result = await ctx.llm.generate({
    provider: 'openai',
    model: 'gpt-5.2',
    reasoningEffort: 'high',
    system: 'You are a coding agent.',
    messages: [createUserMessage('Why is the test failing?')],
    sessionId: 'session-42', // becomes a hashed prompt_cache_key
  })
  await ctx.stop()
  return { text: textOf(result.content), usage: result.usage }
}
