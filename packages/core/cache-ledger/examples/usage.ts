import { Context } from '@cordisjs/core'
import type { CacheObservationData } from '@warmfold/cache-ledger'
import { CacheLedger } from '@warmfold/cache-ledger'
import type { GenerateOptions } from '@warmfold/llm'
import { createUserMessage, LlmRuntime } from '@warmfold/llm'
import { ScriptedAdapter } from '@warmfold/llm/testing'
import { SessionStore } from '@warmfold/session'

export async function main() {
  const ctx = new Context()
  await ctx.start()
  ctx.plugin(LlmRuntime)
  ctx.plugin(SessionStore, { store: 'memory' }) // { store: 'file', directory } keeps the log as JSONL
  ctx.plugin(CacheLedger, { guard: 'warn' }) // 'refuse' stops a cold summary call before it is paid for

  // A host mounts a real adapter; this one answers without a network and reports usage.
  ctx.llm.registerAdapter(
    'deepseek',
    new ScriptedAdapter({
      models: { 'deepseek-v4-flash': { contextWindow: 131072, efforts: ['high', 'max'], defaultEffort: 'high' } },
      responses: (request) => ({
        content: 'ok',
        usage:
          request.purpose === 'compaction'
            ? { inputTokens: 4000, cacheReadTokens: 0, outputTokens: 300 }
            : { inputTokens: 20, cacheReadTokens: 40, outputTokens: 5 },
      }),
    }),
  )

  // The agent loop (@warmfold/agent-loop) sends these; every request names its session.
  const session = await ctx.sessions.create('my-session')
  const tools = [{ name: 'read', description: 'Read a file.', parameters: { type: 'object' } }]
  const base = {
    provider: 'deepseek',
    model: 'deepseek-v4-flash',
    reasoningEffort: 'max',
    system: 'You are a coding agent.',
    tools,
    sessionId: session.id,
  }
  const first = [createUserMessage('Why is the test failing?')]
  const second = [...first, createUserMessage('Look at src/add.ts.')]
  await ctx.llm.generate({ ...base, messages: first, purpose: 'conversation' })
  await ctx.llm.generate({ ...base, messages: second, purpose: 'conversation' })
  // A summary call that forgot the conversation's effort: another cache family, so nothing is reused.
  const { reasoningEffort: _effort, ...withoutEffort } = base
  const summary: GenerateOptions = {
    ...withoutEffort,
    messages: [...second, createUserMessage('Summarize.')],
    purpose: 'compaction',
  }
  await ctx.llm.generate(summary)

  const observations = session.events
    .filter((event) => event.type === 'cache/observation')
    .map((event) => event.data as CacheObservationData)
  const guard = session.events.find((event) => event.type === 'cache/guard')
  const totals = ctx.cacheLedger.totals(session)
  await ctx.stop()
  return {
    causes: observations.map((observation) => observation.cause), // ['none', 'none', 'envelope']
    divergence: observations[2]?.divergence, // { part: 'envelope', field: 'reasoningEffort', charOffset: 0 }
    guard: guard?.data, // { action: 'warn', reason: "the summary call's reasoningEffort differs from …", … }
    uncached: totals.uncached, // 4040: the summary call counts like every other request
  }
}
