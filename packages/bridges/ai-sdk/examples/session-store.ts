import { createOpenAICompatible } from '@ai-sdk/openai-compatible'
import { Context } from '@cordisjs/core'
import { sessionFoldStore, warmfoldMiddleware } from '@warmfold/ai-sdk'
import { SessionStore } from '@warmfold/session'
import { generateText, wrapLanguageModel } from 'ai'

export async function main(directory: string, baseURL: string) {
  const ctx = new Context()
  await ctx.start()
  ctx.plugin(SessionStore, { store: 'file', directory }) // or the SQLite / PostgreSQL backends
  await ctx.inject(['sessions'], async () => {})
  const session = (await ctx.sessions.list()).includes('agent-1')
    ? await ctx.sessions.open('agent-1')
    : await ctx.sessions.create('agent-1')
  const provider = createOpenAICompatible({ name: 'local', baseURL, apiKey: process.env.API_KEY! })
  const model = wrapLanguageModel({
    model: provider.chatModel('local-model'),
    // Each fold is logged and flushed before the folded request is sent.
    middleware: warmfoldMiddleware({
      contextWindow: 32_000,
      store: sessionFoldStore(session, () => ctx.sessions.flush(session)),
    }),
  })
  const result = await generateText({ model, prompt: 'Hello' })
  await ctx.stop()
  return result.text
}
