import { createAnthropic } from '@ai-sdk/anthropic'
import type { FoldReport } from '@warmfold/ai-sdk'
import { warmfoldMiddleware } from '@warmfold/ai-sdk'
import type { ToolSet } from 'ai'
import { generateText, stepCountIs, wrapLanguageModel } from 'ai'

export async function main(tools: ToolSet, baseURL?: string) {
  const anthropic = createAnthropic({ apiKey: process.env.ANTHROPIC_API_KEY!, ...(baseURL ? { baseURL } : {}) })
  const folds: FoldReport[] = []
  const model = wrapLanguageModel({
    model: anthropic('claude-sonnet-4-6'),
    middleware: warmfoldMiddleware({ contextWindow: 200_000, onFold: (fold) => folds.push(fold) }),
  })
  // The agent as it was: the wrapped model is the only change.
  const result = await generateText({
    model,
    system: 'You are a coding agent.',
    prompt: 'Fix the failing test.',
    tools,
    stopWhen: stepCountIs(100),
  })
  return { text: result.text, folds }
}
