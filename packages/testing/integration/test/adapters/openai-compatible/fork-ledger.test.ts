import { AgentLoop, ToolRegistry } from '@warmfold/agent-loop'
import { CacheLedger } from '@warmfold/cache-ledger'
import { CompactionInvariants } from '@warmfold/compaction'
import { BasicCompactionEngine, COMPACTION_INSTRUCTION } from '@warmfold/compaction-basic'
import { LlmRuntime } from '@warmfold/llm'
import { OpenAICompatibleAdapter } from '@warmfold/llm-openai-compatible'
import { SessionStore } from '@warmfold/session'
import type { RecordedRequest, Reply, TestContext } from '@warmfold/test-utils'
import { createTestContext, RecordingServer } from '@warmfold/test-utils'
import { TokenMeter } from '@warmfold/token-meter'
import { afterEach, describe, expect, it } from 'vitest'
import { openaiStream, openaiUsage } from '../../../../../llm/llm-openai-compatible/test/provider-streams.ts'

const MODEL = 'gpt-5.6'
const runs: Array<TestContext & { server: RecordingServer }> = []
afterEach(async () => {
  for (const run of runs.splice(0)) {
    await run.dispose()
    await run.server.close()
    run.assertClean()
  }
})

/** Deterministic filler without long repeated runs (about 300 tokens per 1,200 characters). */
function filler(step: number, length: number): string {
  let text = ''
  let state = (step + 1) * 2654435761
  while (text.length < length) {
    state = (state * 1103515245 + 12345) % 2147483648
    text += `${state.toString(36)} `
  }
  return text.slice(0, length)
}

const isSummary = (request: RecordedRequest) => request.json.messages.at(-1)?.content === COMPACTION_INSTRUCTION
const isFork = (request: RecordedRequest) =>
  request.json.messages.some((message: { role: string; content: unknown }) =>
    String(message.content).startsWith('Fork task'),
  )

/**
 * Conversation replies over SSE: the parent reads a file per step for 12 steps (above the soft
 * threshold, below the pressure threshold), then answers; a fork reads one file, then answers.
 * Summary calls get `summary(request)`.
 */
function responder(summary: (request: RecordedRequest) => Reply | Promise<Reply>) {
  return (request: RecordedRequest, index: number): Reply | Promise<Reply> => {
    const usage = openaiUsage(Math.ceil(request.body.length / 4), 0, 20, 0)
    if (isSummary(request)) return summary(request)
    const last = request.json.messages.at(-1) as { role: string }
    const steps = request.json.messages.filter((message: { role: string }) => message.role === 'assistant').length
    const read = (id: string) => ({
      sse: openaiStream(
        MODEL,
        { text: `Reading ${index}.`, toolCalls: [{ id, name: 'read', arguments: `{"path": "src/${index}.ts"}` }] },
        usage,
      ),
    })
    if (isFork(request))
      return last.role === 'tool' ? { sse: openaiStream(MODEL, { text: 'Fork done.' }, usage) } : read(`fork_${index}`)
    return steps < 12 ? read(`call_${index}`) : { sse: openaiStream(MODEL, { text: 'Parent done.' }, usage) }
  }
}

/** Runtime, file-less store, ledger, loop, tools, meter, invariants and engine; the adapter talks HTTP to `server`. */
async function mount(server: RecordingServer): Promise<TestContext & { server: RecordingServer }> {
  const context = Object.assign(await createTestContext(), { server })
  runs.push(context)
  const { ctx } = context
  ctx.plugin(LlmRuntime)
  ctx.plugin(SessionStore, {})
  ctx.plugin(CacheLedger, {})
  ctx.plugin(ToolRegistry)
  ctx.plugin(AgentLoop)
  ctx.plugin(TokenMeter, {})
  ctx.plugin(CompactionInvariants)
  ctx.plugin(BasicCompactionEngine, {
    maxTokens: 1000,
    artifactTrail: { enabled: false },
    idle: { enabled: false },
    background: { startRatio: 0.5 },
  })
  ctx.plugin(OpenAICompatibleAdapter, {
    provider: 'openai',
    baseURL: server.baseURL,
    apiKey: 'sk-test',
    dialect: 'openai',
    models: { [MODEL]: { contextWindow: 8000, defaultMaxTokens: 500, efforts: ['low', 'high'] } },
    retryBaseMs: 1,
  })
  let step = 0
  ctx.tools.register({
    name: 'read',
    description: 'Read a file',
    parameters: { type: 'object', properties: { path: { type: 'string' } } },
    execute: () => filler(1000 + step++, 1200),
  })
  return context
}

/** `cache/observation` events over every session of the store: the requests the ledger logged. */
async function ledgerEntries(context: TestContext): Promise<number> {
  let entries = 0
  for (const id of await context.ctx.sessions.list())
    entries += (await context.ctx.sessions.read(id)).events.filter((event) => event.type === 'cache/observation').length
  return entries
}

describe('forks, background folds and the ledger over HTTP (OpenAI-compatible)', { timeout: 30_000 }, () => {
  it("five forks of a parent above the soft threshold send no summary call; the server's count is the ledger's", async () => {
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    // The parent's summary is written while its forks run, as a slow provider would.
    const server = await RecordingServer.start(
      responder(async (request) => {
        await gate
        return { sse: openaiStream(MODEL, { text: 'Goal: refactor.' }, openaiUsage(request.body.length / 4, 0, 9, 0)) }
      }),
    )
    const { ctx } = await mount(server)
    const parent = await ctx.agentLoop.create('parent', { provider: 'openai', model: MODEL, system: 'You code.' })
    await parent.followup('Refactor the project.')
    expect(server.where(isSummary)).toHaveLength(1)
    for (let fork = 1; fork <= 5; fork++)
      expect(await parent.fork({ task: `Fork task ${fork}.` })).toMatchObject({
        reason: 'finished',
        answer: 'Fork done.',
      })
    expect(server.where(isFork)).toHaveLength(10)
    expect(server.where(isSummary)).toHaveLength(1)
    release()
    await (ctx.compaction as BasicCompactionEngine).whenFoldsSettle(parent.session)
    expect(await ledgerEntries({ ctx } as TestContext)).toBe(server.requests.length)
  })

  it('a session closed while its background summary call is at the server: the aborted call is logged', async () => {
    const server = await RecordingServer.start(responder(() => ({ hang: true })))
    const context = await mount(server)
    const parent = await context.ctx.agentLoop.create('parent', {
      provider: 'openai',
      model: MODEL,
      system: 'You code.',
    })
    await parent.followup('Refactor the project.')
    for (let poll = 0; server.where(isSummary).length === 0; poll++) {
      if (poll > 2000) throw new Error('the summary call never reached the server')
      await new Promise((resolve) => setTimeout(resolve, 1))
    }
    await context.ctx.sessions.close(parent.session)
    const log = await context.ctx.sessions.read('parent')
    expect(log.events.at(-1)).toMatchObject({
      type: 'cache/observation',
      data: { purpose: 'compaction', finish: 'aborted' },
    })
    expect(await ledgerEntries(context)).toBe(server.requests.length)
  })
})
