import { createAnthropic } from '@ai-sdk/anthropic'
import { Context } from '@cordisjs/core'
import { createUserMessage, LlmRuntime, textOf } from '@warmfold/llm'
import { AiSdkAdapter } from '@warmfold/llm-ai-sdk'

export async function main(baseURL?: string) {
  const apiKey = process.env.ANTHROPIC_API_KEY!
  // Any AI SDK 6 provider works the same way: Bedrock, Vertex, Mistral, Groq, OpenRouter…
  const anthropic = createAnthropic({ apiKey, ...(baseURL ? { baseURL } : {}) })
  const ctx = new Context()
  await ctx.start()
  ctx.plugin(LlmRuntime)
  ctx.plugin(AiSdkAdapter, {
    provider: 'claude', // the provider id warmfold routes by
    models: {
      sonnet: {
        model: anthropic('claude-sonnet-4-6'), // a live object: this config is code, not JSON
        contextWindow: 200_000,
        defaultMaxTokens: 16_000,
        efforts: ['off', 'high'],
        effortOptions: { high: { anthropic: { thinking: { type: 'enabled', budgetTokens: 8192 } } } },
      },
    },
    redact: [apiKey], // the adapter never holds the key; name it so errors never show it
  })

  const result = await ctx.llm.generate({
    provider: 'claude',
    model: 'sonnet',
    reasoningEffort: 'high',
    system: 'You are a coding agent.',
    messages: [createUserMessage('Why is the test failing?')],
  })
  await ctx.stop()
  return { text: textOf(result.content), usage: result.usage }
}
