import { Context } from '@cordisjs/core'
import { createUserMessage, LlmRuntime, textOf } from '@warmfold/llm'
import { GoogleAdapter } from '@warmfold/llm-google'

export async function main(baseURL = 'https://generativelanguage.googleapis.com') {
  const ctx = new Context()
  await ctx.start()
  ctx.plugin(LlmRuntime)
  ctx.plugin(GoogleAdapter, {
    baseURL, // optional: the Gemini API by default, or a gateway
    models: {
      // Gemini 3 takes thinkingLevel: efforts minimal/low/medium/high by default (Gemini 2.5: thinkingBudget)
      'gemini-3-flash-preview': { contextWindow: 1_048_576, defaultMaxTokens: 65_536, defaultEffort: 'low' },
    },
    // the key comes from GEMINI_API_KEY; also: apiKeyEnv: 'MY_GEMINI_KEY', includeThoughts: false
  })

  const result = await ctx.llm.generate({
    provider: 'google',
    model: 'gemini-3-flash-preview',
    reasoningEffort: 'high',
    system: 'You are a coding agent.',
    messages: [createUserMessage('Why is the test failing?')],
  })
  await ctx.stop()
  return { text: textOf(result.content), usage: result.usage }
}
