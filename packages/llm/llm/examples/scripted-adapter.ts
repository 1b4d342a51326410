import { Context } from '@cordisjs/core'
import { createUserMessage, LlmError, LlmRuntime, textOf } from '@warmfold/llm'
import { ScriptedAdapter } from '@warmfold/llm/testing'

export async function main() {
  const ctx = new Context()
  await ctx.start()
  ctx.plugin(LlmRuntime)

  const adapter = new ScriptedAdapter({
    models: {
      // The HTTP adapters' flat shape…
      m: { contextWindow: 128000, efforts: ['low', 'high'], defaultEffort: 'high' },
      // …or a ModelInfo: the same model, described as ctx.llm.resolveModelInfo returns it.
      n: { contextWindow: 128000, reasoning: { efforts: ['low', 'high'], defaultEffort: 'high' } },
    },
    responses: [{ content: 'first reply' }, { error: new LlmError('RATE_LIMITED', 'slow down') }],
  })
  ctx.llm.registerAdapter('p', adapter)

  const request = { provider: 'p', model: 'm', messages: [createUserMessage('hi')] }
  const first = textOf((await ctx.llm.generate(request)).content)
  const second = await ctx.llm.generate(request).then(
    () => 'no error',
    (error: unknown) => (LlmError.isInstance(error) ? error.code : String(error)),
  )
  await ctx.stop()
  // adapter.requests: every request received, exactly as the adapter saw it (effort filled in).
  return { first, second, efforts: adapter.requests.map((sent) => sent.reasoningEffort) } // 'first reply', 'RATE_LIMITED', ['high', 'high']
}
