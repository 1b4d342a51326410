import { Context } from '@cordisjs/core'
import { createUserMessage, LlmRuntime, textOf } from '@warmfold/llm'
import { AnthropicAdapter } from '@warmfold/llm-anthropic'

export async function main(baseURL = 'https://api.anthropic.com') {
  const ctx = new Context()
  await ctx.start()
  ctx.plugin(LlmRuntime)
  ctx.plugin(AnthropicAdapter, {
    baseURL, // optional: the SDK's default (ANTHROPIC_BASE_URL, else https://api.anthropic.com), or a gateway
    models: {
      'claude-sonnet-4-6': {
        contextWindow: 200_000,
        defaultMaxTokens: 32_000,
        efforts: ['off', 'low', 'high', 'max'],
        defaultEffort: 'off',
      },
    },
    // the key comes from ANTHROPIC_API_KEY; also: cacheTtl: '1h', apiKeyEnv: 'MY_ANTHROPIC_KEY'
  })

  const result = await ctx.llm.generate({
    provider: 'anthropic',
    model: 'claude-sonnet-4-6',
    reasoningEffort: 'high',
    system: 'You are a coding agent.',
    messages: [createUserMessage('Why is the test failing?')],
  })
  await ctx.stop()
  return { text: textOf(result.content), usage: result.usage }
}
