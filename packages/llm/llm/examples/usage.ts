import { Context } from '@cordisjs/core'
import type { GenerateOptions } from '@warmfold/llm'
import { createUserMessage, LlmRuntime, textOf } from '@warmfold/llm'
import { ScriptedAdapter } from '@warmfold/llm/testing'

export async function main() {
  const ctx = new Context()
  await ctx.start()
  ctx.plugin(LlmRuntime)

  // An adapter package does this in its own plugin (inject: ['llm']); the registration is
  // undone when that plugin unloads. A host mounts a real adapter (@warmfold/llm-openai-compatible,
  // @warmfold/llm-anthropic); the scripted one here answers without a network.
  ctx.plugin({
    inject: ['llm'],
    apply(ctx) {
      ctx.llm.registerAdapter(
        'deepseek',
        new ScriptedAdapter({
          models: {
            'deepseek-v4-flash': {
              contextWindow: 131072,
              defaultMaxTokens: 8192,
              efforts: ['off', 'high', 'max'],
              defaultEffort: 'high',
            },
          },
          responses: { content: 'The assertion expects 4 but `add` subtracts.' },
        }),
      )
    },
  })

  // Observers see every request exactly as the adapter receives it, defaults filled in.
  const sent: GenerateOptions[] = []
  ctx.on('llm/stream', (options) => {
    sent.push(options)
  })

  // resolveModelInfo returns a Promise: await it before reading the window.
  const info = await ctx.llm.resolveModelInfo('deepseek', 'deepseek-v4-flash')
  const result = await ctx.llm.generate({
    provider: 'deepseek',
    model: 'deepseek-v4-flash',
    messages: [createUserMessage('Why is the test failing?')],
  })
  await ctx.stop()
  return {
    reply: textOf(result.content), // 'The assertion expects 4 but `add` subtracts.'
    finishReason: result.finishReason, // 'stop'
    contextWindow: info.contextWindow, // 131072
    sentEffort: sent[0]?.reasoningEffort, // 'high': the model's default, materialized
    sentMaxTokens: sent[0]?.maxTokens, // 8192
  }
}
