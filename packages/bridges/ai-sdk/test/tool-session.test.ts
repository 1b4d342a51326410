import type { ModelMessage } from 'ai'
import { generateText, jsonSchema, stepCountIs, streamText, tool, ToolLoopAgent, wrapLanguageModel } from 'ai'
import { COMPACTION_INSTRUCTION } from '@warmfold/compaction-basic'
import { afterEach, describe, expect, it } from 'vitest'
import type { CacheReport, FoldReport } from '../src/index.ts'
import { compareBodies, warmfoldMiddleware } from '../src/index.ts'
import type { Wire } from './scripted-provider.ts'
import { ScriptedProvider } from './scripted-provider.ts'

const WINDOW = 8_000
const SYSTEM = 'You are a careful coding agent. Read the files you are asked about.'
const FILE = 'export const value = 1 // a line of a source file that the agent reads\n'.repeat(28)

const readFile = tool({
  description: 'Read a file of the repository',
  inputSchema: jsonSchema<{ path: string }>({
    type: 'object',
    properties: { path: { type: 'string' } },
    required: ['path'],
    additionalProperties: false,
  }),
  execute: async ({ path }) => `// ${path}\n${FILE}`,
})

let provider: ScriptedProvider | undefined
afterEach(async () => {
  await provider?.close()
  provider = undefined
})

interface Harness {
  readonly provider: ScriptedProvider
  readonly model: ReturnType<typeof wrapLanguageModel>
  readonly folds: FoldReport[]
  readonly reports: CacheReport[]
}

async function harness(wire: Wire, steps: number): Promise<Harness> {
  provider = await ScriptedProvider.start(wire, steps)
  const folds: FoldReport[] = []
  const reports: CacheReport[] = []
  const model = wrapLanguageModel({
    model: provider.model(),
    middleware: warmfoldMiddleware({
      contextWindow: WINDOW,
      onFold: (fold) => folds.push(fold),
      onCacheReport: (report) => reports.push(report),
    }),
  })
  return { provider, model, folds, reports }
}

/** The cache properties every session must have, checked on the bytes the server received. */
function checkWire(scripted: ScriptedProvider, folds: readonly FoldReport[]): void {
  const requests = scripted.requests
  expect(folds.length).toBeGreaterThanOrEqual(3)
  expect(folds.every((fold) => fold.committed && fold.warm)).toBe(true)
  expect(requests.filter((request) => request.summary)).toHaveLength(folds.length)
  for (const [index, request] of requests.entries()) {
    // No request exceeds the window (the server's own count: 4 characters per token).
    expect(request.promptTokens, `request ${index}`).toBeLessThanOrEqual(WINDOW)
    if (index === 0) continue
    const previous = requests[index - 1]!
    if (request.summary) {
      // The summary request is the previous request's body plus one instruction message.
      const replay = compareBodies(previous.recorded.json, request.recorded.json)
      expect(replay, `summary request ${index}`).toMatchObject({ replay: true })
      const appended = replay.appendedAt!.replace(/^\$/, '')
      const value = appended
        .split(/[.[\]]/)
        .filter(Boolean)
        .reduce<any>((node, key) => node[key], request.recorded.json)
      expect(JSON.stringify(value)).toContain(JSON.stringify(COMPACTION_INSTRUCTION).slice(1, 200))
      continue
    }
    if (previous.summary) continue
    // Every conversation request that does not follow a fold extends the previous one.
    const before = previous.recorded.json.messages as unknown[]
    const after = request.recorded.json.messages as unknown[]
    expect(JSON.stringify(after.slice(0, before.length)), `request ${index} extends request ${index - 1}`).toBe(
      JSON.stringify(before),
    )
    expect(after.length).toBeGreaterThan(before.length)
  }
}

// 40 steps through real HTTP each: generous for a loaded 2-core machine.
describe('warmfoldMiddleware in a 40-step tool session', { timeout: 30_000 }, () => {
  for (const wire of ['openai-compatible', 'anthropic'] as const) {
    it(`generateText with tools and stopWhen over ${wire}: warm folds, every request within the window, the conversation finishes`, async () => {
      const { provider: scripted, model, folds } = await harness(wire, 40)
      const result = await generateText({
        model,
        system: SYSTEM,
        prompt: 'Read file-0.ts to file-39.ts, one by one.',
        tools: { read_file: readFile },
        stopWhen: stepCountIs(60),
        maxOutputTokens: 512,
      })
      expect(result.text).toBe('done')
      expect(result.steps).toHaveLength(41)
      checkWire(scripted, folds)
    })
  }

  it('streamText over openai-compatible: the summary call streams like the conversation, and is a byte replay', async () => {
    const { provider: scripted, model, folds } = await harness('openai-compatible', 40)
    const result = streamText({
      model,
      system: SYSTEM,
      prompt: 'Read file-0.ts to file-39.ts, one by one.',
      tools: { read_file: readFile },
      stopWhen: stepCountIs(60),
      maxOutputTokens: 512,
    })
    expect(await result.text).toBe('done')
    expect(scripted.requests.every((request) => request.recorded.json.stream === true)).toBe(true)
    checkWire(scripted, folds)
  })

  it('ToolLoopAgent over anthropic finishes with warm folds', async () => {
    const { provider: scripted, model, folds } = await harness('anthropic', 40)
    const agent = new ToolLoopAgent({
      model,
      instructions: SYSTEM,
      tools: { read_file: readFile },
      stopWhen: stepCountIs(60),
      maxOutputTokens: 512,
    })
    const result = await agent.generate({ prompt: 'Read file-0.ts to file-39.ts, one by one.' })
    expect(result.text).toBe('done')
    checkWire(scripted, folds)
  })

  it('a multi-turn host that re-sends its full history gets the folded bytes of the previous turn', async () => {
    const { provider: scripted, model, folds } = await harness('openai-compatible', 30)
    const history: ModelMessage[] = [{ role: 'user', content: 'Read file-0.ts to file-29.ts, one by one.' }]
    const first = await generateText({
      model,
      system: SYSTEM,
      messages: history,
      tools: { read_file: readFile },
      stopWhen: stepCountIs(60),
      maxOutputTokens: 512,
    })
    expect(first.text).toBe('done')
    expect(folds.length).toBeGreaterThan(0)
    const lastOfTurn = scripted.requests.at(-1)!.recorded.json.messages as unknown[]
    const foldsOfTurn = folds.length
    history.push(...first.response.messages, { role: 'user', content: 'Thanks. Now summarize what you read.' })
    const second = await generateText({
      model,
      system: SYSTEM,
      messages: history,
      tools: { read_file: readFile },
      stopWhen: stepCountIs(3),
    })
    expect(second.text).toBe('done')
    const nextTurn = scripted.requests.at(-1)!.recorded.json.messages as unknown[]
    // The unfolded history of the host became the same folded prefix the provider cached.
    expect(JSON.stringify(nextTurn.slice(0, lastOfTurn.length))).toBe(JSON.stringify(lastOfTurn))
    expect(nextTurn.length).toBe(lastOfTurn.length + 2)
    expect(folds).toHaveLength(foldsOfTurn)
  })

  it('a host that changes its system prompt between turns keeps its folds: the history after the system message is the folded one', async () => {
    const { provider: scripted, model, folds } = await harness('openai-compatible', 30)
    const history: ModelMessage[] = [{ role: 'user', content: 'Read file-0.ts to file-29.ts, one by one.' }]
    const first = await generateText({
      model,
      system: SYSTEM,
      messages: history,
      tools: { read_file: readFile },
      stopWhen: stepCountIs(60),
      maxOutputTokens: 512,
    })
    const foldsOfTurn = folds.length
    expect(foldsOfTurn).toBeGreaterThan(0)
    const lastOfTurn = scripted.requests.at(-1)!.recorded.json.messages as unknown[]
    history.push(...first.response.messages, { role: 'user', content: 'Now summarize.' })
    await generateText({
      model,
      system: `${SYSTEM} Today is a Tuesday.`,
      messages: history,
      tools: { read_file: readFile },
      stopWhen: stepCountIs(1),
      maxOutputTokens: 512,
    })
    const next = scripted.requests.at(-1)!.recorded.json.messages as unknown[]
    expect(JSON.stringify(next.slice(1, lastOfTurn.length))).toBe(JSON.stringify(lastOfTurn.slice(1)))
    expect(folds).toHaveLength(foldsOfTurn)
  })

  it('background folds: the summary call of the previous request runs beside the conversation, and its checkpoint lands at a later call', async () => {
    provider = await ScriptedProvider.start('openai-compatible', 40)
    const folds: FoldReport[] = []
    const reports: CacheReport[] = []
    const model = wrapLanguageModel({
      model: provider.model(),
      middleware: warmfoldMiddleware({
        contextWindow: WINDOW,
        background: { startRatio: 0.6 },
        onFold: (fold) => folds.push(fold),
        onCacheReport: (report) => reports.push(report),
      }),
    })
    const result = await generateText({
      model,
      system: SYSTEM,
      prompt: 'Read file-0.ts to file-39.ts, one by one.',
      tools: { read_file: readFile },
      stopWhen: stepCountIs(60),
      maxOutputTokens: 512,
    })
    expect(result.text).toBe('done')
    expect(folds.length).toBeGreaterThanOrEqual(3)
    expect(folds.every((fold) => fold.committed && fold.warm && fold.trigger === 'background')).toBe(true)
    const conversation = provider.requests.filter((request) => !request.summary)
    for (const request of provider.requests) expect(request.promptTokens).toBeLessThanOrEqual(WINDOW)
    // Each summary request is some earlier conversation request's body plus one instruction.
    for (const summary of provider.requests.filter((request) => request.summary)) {
      expect(
        conversation.some(
          (request) =>
            request.recorded.receivedAt <= summary.recorded.receivedAt &&
            compareBodies(request.recorded.json, summary.recorded.json).replay,
        ),
      ).toBe(true)
    }
    // Every conversation request extends the one before, but where a checkpoint landed.
    const relations = reports.filter((report) => report.kind === 'conversation').map((report) => report.relation)
    expect(relations.filter((relation) => relation === 'fold')).toHaveLength(folds.length)
    expect(relations.filter((relation) => relation !== 'fold' && relation !== 'extends')).toEqual(['first'])
  })
})
