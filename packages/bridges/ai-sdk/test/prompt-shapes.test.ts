import type { ModelMessage } from 'ai'
import { generateText, jsonSchema, stepCountIs, tool, wrapLanguageModel } from 'ai'
import { afterEach, describe, expect, it } from 'vitest'
import type { FoldReport } from '../src/index.ts'
import { compareBodies, warmfoldMiddleware } from '../src/index.ts'
import type { Wire } from './scripted-provider.ts'
import { ScriptedProvider } from './scripted-provider.ts'

const WINDOW = 6_000
const SYSTEM = 'You are a coding agent.'

const tools = {
  read_file: tool({
    description: 'Read a file',
    inputSchema: jsonSchema<{ path: string }>({
      type: 'object',
      properties: { path: { type: 'string' } },
      required: ['path'],
    }),
    execute: async ({ path }) => `// ${path}\n${'export const value = 1\n'.repeat(60)}`,
  }),
}

let provider: ScriptedProvider | undefined
afterEach(async () => {
  await provider?.close()
  provider = undefined
})

async function harness(wire: Wire, steps: number) {
  provider = await ScriptedProvider.start(wire, steps)
  const folds: FoldReport[] = []
  const model = wrapLanguageModel({
    model: provider.model(),
    middleware: warmfoldMiddleware({ contextWindow: WINDOW, maxTokens: 50, onFold: (fold) => folds.push(fold) }),
  })
  return { scripted: provider, model, folds }
}

type Body = { messages: unknown[] } & Record<string, unknown>

/** An assistant turn whose reasoning carries Anthropic's signature, as the provider returned it. */
function signed(thinking: string, signature: string, text: string): ModelMessage {
  return {
    role: 'assistant',
    content: [
      { type: 'reasoning', text: thinking, providerOptions: { anthropic: { signature } } },
      { type: 'text', text },
    ],
  }
}

describe('what a fold keeps of the prompt', { timeout: 30_000 }, () => {
  it('provider options other than warmfold’s reach every conversation request and the summary call', async () => {
    const { scripted, model, folds } = await harness('openai-compatible', 12)
    const result = await generateText({
      model,
      system: SYSTEM,
      prompt: 'Read the files.',
      tools,
      stopWhen: stepCountIs(14),
      providerOptions: { warmfold: { fold: true }, scripted: { user: 'host-7' } },
    })
    expect(result.text).toBe('done')
    expect(folds.filter((fold) => fold.committed).length).toBeGreaterThan(0)
    const summaries = scripted.requests.filter((request) => request.summary)
    expect(summaries.length).toBeGreaterThan(0)
    for (const request of scripted.requests) {
      expect((request.recorded.json as Body).user).toBe('host-7')
      expect(request.recorded.json).not.toHaveProperty('warmfold')
      expect(request.recorded.body).not.toContain('"fold":true')
    }
    // And the summary call is still the previous request plus one instruction.
    for (const summary of summaries) {
      const previous = scripted.requests[scripted.requests.indexOf(summary) - 1]!
      expect(compareBodies(previous.recorded.json, summary.recorded.json).replay).toBe(true)
    }
  })

  it('the region stays inside the replayed request: messages the summary call never saw are kept verbatim', async () => {
    const { scripted, model, folds } = await harness('openai-compatible', 6)
    const turn = await generateText({
      model,
      system: SYSTEM,
      prompt: 'Read the files.',
      tools,
      stopWhen: stepCountIs(8),
    })
    expect(turn.text).toBe('done')
    expect(folds).toEqual([])
    const replayed = (scripted.requests.at(-1)!.recorded.json as Body).messages
    // The host adds three messages at once; together they cross the threshold, the last one alone fills the retained tail.
    const pasted = `A design note to keep in mind:\n${'the cache must stay warm across folds\n'.repeat(120)}`
    const log = `Now this log:\n${'a long log line of the failing build\n'.repeat(150)}`
    const messages: ModelMessage[] = [
      { role: 'user', content: 'Read the files.' },
      ...turn.response.messages,
      { role: 'user', content: pasted },
      { role: 'assistant', content: 'Noted.' },
      { role: 'user', content: log },
    ]
    await generateText({ model, system: SYSTEM, messages, tools, stopWhen: stepCountIs(1) })
    expect(folds).toHaveLength(1)
    expect(folds[0]).toMatchObject({ committed: true, warm: true })
    // Everything the replayed request held but its system message, and nothing after it.
    expect(folds[0]!.foldedMessages).toBe(replayed.length - 1)
    expect(scripted.requests.at(-2)!.summary).toBe(true)
    const folded = (scripted.requests.at(-1)!.recorded.json as Body).messages as Array<{ content: unknown }>
    // System, checkpoint, then the four messages the summary call never saw, verbatim.
    expect(folded.slice(2).map((message) => message.content)).toEqual(['done', pasted, 'Noted.', log])
  })

  it('signed reasoning survives: the summary call replays it byte for byte and the fold stops before the latest signed turn', async () => {
    const { scripted, model, folds } = await harness('anthropic', 0)
    const history: ModelMessage[] = [
      { role: 'user', content: 'Plan the migration.' },
      signed('The user wants a plan; start from the schema.', 'sig-1', 'First, the schema.'),
      { role: 'user', content: `The schema:\n${'create table item (id integer primary key, name text)\n'.repeat(90)}` },
      signed('Now the data; keep the ids stable.', 'sig-2', 'Then, the data.'),
      { role: 'user', content: `The data:\n${'insert into item values (1, "a row of the table")\n'.repeat(90)}` },
    ]
    await generateText({ model, system: SYSTEM, messages: history })
    expect(folds).toEqual([])
    const previous = scripted.requests.at(-1)!.recorded.json as Body
    const latestSigned = JSON.stringify(previous.messages[3])
    expect(latestSigned).toContain('"signature":"sig-2"')
    // The host adds a long message: over the threshold, and alone more than the retained tail.
    await generateText({
      model,
      system: SYSTEM,
      messages: [
        ...history,
        { role: 'user', content: `And the log:\n${'a long log line of the migration\n'.repeat(300)}` },
      ],
    })
    expect(folds).toHaveLength(1)
    expect(folds[0]).toMatchObject({ committed: true, warm: true })
    const [summary, after] = scripted.requests.slice(-2)
    // The summary call is the previous body plus the instruction: both signed turns as they were sent.
    expect(compareBodies(previous, summary!.recorded.json)).toMatchObject({ replay: true })
    // The fold took the turns before the latest signed one; that one reaches the provider unchanged.
    expect(folds[0]!.foldedMessages).toBe(3)
    const sent = (after!.recorded.json as Body).messages
    expect(JSON.stringify(sent[1])).toBe(latestSigned)
    expect(after!.recorded.body).not.toContain('sig-1')
  })
})
