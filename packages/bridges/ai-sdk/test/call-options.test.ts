import type { ModelMessage } from 'ai'
import { generateText, jsonSchema, pruneMessages, stepCountIs, tool, wrapLanguageModel } from 'ai'
import { afterEach, describe, expect, it } from 'vitest'
import type { CacheReport } from '../src/index.ts'
import { warmfoldMiddleware } from '../src/index.ts'
import { ScriptedProvider } from './scripted-provider.ts'

let provider: ScriptedProvider | undefined
afterEach(async () => {
  await provider?.close()
  provider = undefined
})

const readFile = tool({
  description: 'Read a file',
  inputSchema: jsonSchema<{ path: string }>({
    type: 'object',
    properties: { path: { type: 'string' } },
    required: ['path'],
  }),
  execute: async ({ path }) => `// ${path}\n${'x'.repeat(400)}`,
})

describe('warmfoldMiddleware call options', () => {
  it('strips its own providerOptions key before the provider sees the call, and fold: false skips folding', async () => {
    provider = await ScriptedProvider.start('openai-compatible', 0)
    const folds: unknown[] = []
    const model = wrapLanguageModel({
      model: provider.model(),
      middleware: warmfoldMiddleware({ contextWindow: 1_000, onFold: (fold) => folds.push(fold) }),
    })
    const result = await generateText({
      model,
      prompt: 'y'.repeat(4_000),
      providerOptions: { warmfold: { fold: false }, scripted: { user: 'host' } },
    })
    expect(result.text).toBe('done')
    expect(folds).toEqual([])
    const body = provider.requests[0]!.recorded.body
    expect(body).not.toContain('warmfold')
    expect(body).not.toContain('"fold"')
  })

  it('rejects a providerOptions.warmfold.fold that is not a boolean, naming it', async () => {
    provider = await ScriptedProvider.start('openai-compatible', 0)
    const model = wrapLanguageModel({
      model: provider.model(),
      middleware: warmfoldMiddleware({ contextWindow: 1_000 }),
    })
    await expect(
      generateText({ model, prompt: 'hello', providerOptions: { warmfold: { fold: 'no' } } }),
    ).rejects.toThrow('providerOptions.warmfold.fold must be a boolean, got "no"')
  })

  it('passes a call with previousResponseId through untouched (the provider holds the history)', async () => {
    provider = await ScriptedProvider.start('openai-compatible', 0)
    const folds: unknown[] = []
    const model = wrapLanguageModel({
      model: provider.model(),
      middleware: warmfoldMiddleware({ contextWindow: 1_000, onFold: (fold) => folds.push(fold) }),
    })
    await generateText({
      model,
      prompt: 'y'.repeat(4_000),
      providerOptions: { scripted: { previousResponseId: 'resp_1' } },
    })
    expect(folds).toEqual([])
    expect(provider.requests).toHaveLength(1)
  })

  it('refuses options it does not know and policy values the engine refuses, naming the key', () => {
    expect(() => warmfoldMiddleware({ contextWindow: 0 })).toThrow(
      'warmfoldMiddleware options: contextWindow must be an integer from 1 to 2147483647, got 0',
    )
    expect(() => warmfoldMiddleware({ contextWindow: 8_000, retainRatio: 0.2, retainTokens: 100 })).toThrow(
      'warmfoldMiddleware options: retainRatio and retainTokens are exclusive; set one of them',
    )
    expect(() => warmfoldMiddleware({ contextWindow: 8_000, compactionRetries: 2 } as never)).toThrow(
      'warmfoldMiddleware options: unknown key "compactionRetries"',
    )
    expect(() => warmfoldMiddleware({ contextWindow: 8_000, summaryBudget: { fallbackEffort: 'low' } })).toThrow(
      'summaryBudget.fallbackEffort is not supported',
    )
  })

  it('reports a host that rewrote its history (pruneMessages in prepareStep) instead of claiming the request extends the previous one', async () => {
    provider = await ScriptedProvider.start('openai-compatible', 8)
    const reports: CacheReport[] = []
    const model = wrapLanguageModel({
      model: provider.model(),
      middleware: warmfoldMiddleware({ contextWindow: 100_000, onCacheReport: (report) => reports.push(report) }),
    })
    const messages: ModelMessage[] = [{ role: 'user', content: 'Read eight files.' }]
    const result = await generateText({
      model,
      messages,
      tools: { read_file: readFile },
      stopWhen: stepCountIs(20),
      // The AI SDK cookbook's recipe: drop old tool calls once the history grows.
      prepareStep: ({ stepNumber, messages: stepMessages }) =>
        stepNumber === 5
          ? { messages: pruneMessages({ messages: stepMessages, toolCalls: 'before-last-2-messages' }) }
          : {},
    })
    expect(result.text).toBe('done')
    const relations = reports.map((report) => report.relation)
    expect(relations.slice(0, 5)).toEqual(['first', 'extends', 'extends', 'extends', 'extends'])
    expect(relations[5]).toBe('host-rewrite')
    expect(reports[5]!.divergence).toMatchObject({ part: 'message', index: 1, role: 'assistant' })
    expect(reports[5]!.description).toBe(
      `the host rewrote its history: the request's message 1 (assistant) differs from the previous request's at character ${reports[5]!.divergence!.charOffset}: no fold or prune logged since explains it`,
    )
    // The requests after the rewrite extend the rewritten one again.
    expect(relations.slice(6)).toEqual(relations.slice(6).map(() => 'extends'))
  })
})
