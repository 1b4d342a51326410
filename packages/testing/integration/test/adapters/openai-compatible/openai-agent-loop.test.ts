import { AgentLoop, ToolRegistry } from '@warmfold/agent-loop'
import { CompactionInvariants } from '@warmfold/compaction'
import { BasicCompactionEngine, COMPACTION_INSTRUCTION } from '@warmfold/compaction-basic'
import { LlmRuntime, promptCacheKeyFor } from '@warmfold/llm'
import { SessionStore } from '@warmfold/session'
import type { RecordedRequest, TestContext } from '@warmfold/test-utils'
import { createTestContext, RecordingServer } from '@warmfold/test-utils'
import { TokenMeter } from '@warmfold/token-meter'
import { afterEach, describe, expect, it } from 'vitest'
import { OpenAICompatibleAdapter } from '@warmfold/llm-openai-compatible'
import { openaiStream, openaiUsage } from '../../../../../llm/llm-openai-compatible/test/provider-streams.ts'

const MODEL = 'gpt-5.6'
const SYSTEM = 'You are a coding agent.'
const SESSION = 'alice-refactor-42'
const explicit = { mode: 'explicit' }

function isSummaryRequest(request: RecordedRequest): boolean {
  const content = request.json.messages.at(-1)?.content
  return Array.isArray(content) && content.length === 1 && content[0].text === COMPACTION_INSTRUCTION
}

/** `value` as JSON without its breakpoint markers. */
function strip(value: unknown): string {
  return JSON.stringify(value, (key, member) => (key === 'prompt_cache_breakpoint' ? undefined : member))
}

/** Position of the last message carrying a `prompt_cache_breakpoint`. */
function lastBreakpoint(messages: any[]): number {
  return messages.findLastIndex(
    (message) => Array.isArray(message.content) && message.content.some((part: any) => part.prompt_cache_breakpoint),
  )
}

const contexts: Array<TestContext & { server: RecordingServer }> = []
afterEach(async () => {
  for (const context of contexts.splice(0)) {
    await context.dispose()
    await context.server.close()
  }
})

// A whole session over HTTP: a few seconds alone, more on a loaded machine, so not the default 5 s.
describe(
  'through the real agent loop and BasicCompactionEngine (OpenAI dialect, explicit breakpoints)',
  { timeout: 30_000 },
  () => {
    it('sends one prompt_cache_key for the session, and each summary call shares the conversation prefix up to its last breakpoint, not on the instruction', async () => {
      let step = 0
      const server = await RecordingServer.start((request) => {
        const prompt = Math.ceil(request.body.length / 4)
        const usage = openaiUsage(prompt, 0, 20, 0, 0)
        if (isSummaryRequest(request))
          return { sse: openaiStream(MODEL, { text: 'Goal: refactor. Files read: many. Next: tests.' }, usage) }
        const current = step++
        if (current >= 30) return { sse: openaiStream(MODEL, { text: 'All done.' }, usage) }
        return {
          sse: openaiStream(
            MODEL,
            {
              text: `Reading file ${current}.`,
              toolCalls: [{ id: `call_${current}`, name: 'read', arguments: `{"path": "src/file-${current}.ts"}` }],
            },
            usage,
          ),
        }
      })
      const context = Object.assign(await createTestContext(), { server })
      contexts.push(context)
      const { ctx } = context
      ctx.plugin(LlmRuntime)
      ctx.plugin(SessionStore, {})
      ctx.plugin(ToolRegistry)
      ctx.plugin(AgentLoop)
      ctx.plugin(TokenMeter, {})
      ctx.plugin(CompactionInvariants)
      ctx.plugin(BasicCompactionEngine, {})
      ctx.plugin(OpenAICompatibleAdapter, {
        provider: 'openai',
        baseURL: server.baseURL,
        apiKey: 'sk-test',
        dialect: 'openai',
        models: {
          [MODEL]: { contextWindow: 8000, defaultMaxTokens: 500, cacheBreakpoints: true, promptCacheRetention: '24h' },
        },
        retryBaseMs: 1,
      })
      let reads = 0
      ctx.tools.register({
        name: 'read',
        description: 'Read a file',
        parameters: { type: 'object', properties: { path: { type: 'string' } } },
        execute: () => `${reads++} `.repeat(300),
      })
      const agent = await ctx.agentLoop.create(SESSION, { provider: 'openai', model: MODEL, system: SYSTEM })
      agent.followup('Refactor the project.')
      await agent.whenIdle()
      expect(agent.session.events.at(-1)).toMatchObject({ type: 'turn/end', data: { reason: 'stop' } })

      const summaries = server.where(isSummaryRequest)
      expect(summaries.length, 'a compaction happened').toBeGreaterThanOrEqual(1)
      // The agent loop and the compaction engine both pass the session id: one routing key.
      for (const request of server.requests) {
        expect(request.json.prompt_cache_key).toBe(promptCacheKeyFor(SESSION))
        expect(request.json.prompt_cache_retention).toBe('24h')
        expect(request.json.prompt_cache_options).toEqual({ mode: 'explicit' })
        expect(request.body).not.toContain(SESSION)
      }
      for (const summary of summaries) {
        const index = server.requests.indexOf(summary)
        const conversation = server.requests
          .slice(0, index)
          .filter((request) => !isSummaryRequest(request))
          .at(-1)!.json
        const messages = summary.json.messages
        // The instruction is the last message and carries no breakpoint.
        expect(messages.at(-1)).toEqual({ role: 'user', content: [{ type: 'text', text: COMPACTION_INSTRUCTION }] })
        const end = lastBreakpoint(messages)
        expect(end).toBeGreaterThan(0)
        expect(end).toBeLessThan(messages.length - 1)
        expect(messages[0].content).toEqual([{ type: 'text', text: SYSTEM, prompt_cache_breakpoint: explicit }])
        // The bytes up to and including that breakpoint's message are the conversation request's (markers aside).
        expect(strip(messages.slice(0, end + 1))).toBe(strip(conversation.messages.slice(0, end + 1)))
        expect(summary.body.split('prompt_cache_breakpoint').length - 1).toBe(2)
      }
      // Every conversation request marks exactly the system prompt and its last message.
      for (const request of server.requests.filter((candidate) => !isSummaryRequest(candidate))) {
        expect(lastBreakpoint(request.json.messages)).toBe(request.json.messages.length - 1)
        expect(request.body.split('prompt_cache_breakpoint').length - 1).toBe(2)
      }
      context.assertClean()
    })
  },
)
