import type { ModelMessage } from 'ai'
import { generateText, jsonSchema, stepCountIs, tool, wrapLanguageModel } from 'ai'
import { afterEach, describe, expect, it } from 'vitest'
import type { FoldReport } from '../src/index.ts'
import { compareBodies, warmfoldMiddleware } from '../src/index.ts'
import type { ScriptedOptions } from './scripted-provider.ts'
import { ScriptedProvider } from './scripted-provider.ts'

const readTool = tool({
  description: 'Read a file',
  inputSchema: jsonSchema<{ path: string }>({
    type: 'object',
    properties: { path: { type: 'string' } },
    required: ['path'],
  }),
  execute: async ({ path }) => `// ${path}\n${'export const value = 1\n'.repeat(60)}`,
})

let provider: ScriptedProvider | undefined
afterEach(async () => {
  await provider?.close()
  provider = undefined
})

// A small summary cap, so the ladder has room to grow it inside the 6,000-token window.
async function session(
  steps: number,
  options: ScriptedOptions,
  messages: ModelMessage[] = [{ role: 'user', content: 'Read the files.' }],
) {
  provider = await ScriptedProvider.start('openai-compatible', steps, options)
  const folds: FoldReport[] = []
  const model = wrapLanguageModel({
    model: provider.model(),
    middleware: warmfoldMiddleware({ contextWindow: 6_000, maxTokens: 50, onFold: (fold) => folds.push(fold) }),
  })
  const result = await generateText({
    model,
    system: 'You are a coding agent.',
    messages,
    tools: { read_file: readTool },
    stopWhen: stepCountIs(steps + 2),
  })
  return { result, folds, provider }
}

describe('fold verdicts and the summary ladder', { timeout: 30_000 }, () => {
  it('a summary answered with a tool call gets the very same request once more; a truncated one the same prompt with a doubled cap', async () => {
    const { result, folds, provider: scripted } = await session(12, { summaryReplies: ['tool-call', 'truncated'] })
    expect(result.text).toBe('done')
    const first = folds[0]!
    expect(first).toMatchObject({ committed: true, warm: true })
    expect(first.attempts.map((attempt) => attempt.reason)).toEqual(['first', 'tool-call', 'larger-cap'])
    expect(first.attempts.map((attempt) => attempt.finishReason)).toEqual(['tool-calls', 'max-tokens', 'stop'])
    const summaries = scripted.requests
      .filter((request) => request.summary)
      .slice(0, 3)
      .map((request) => request.recorded.json)
    // The retry after a tool call is byte-identical; the larger cap changes only max_tokens.
    expect(JSON.stringify(summaries[1])).toBe(JSON.stringify(summaries[0]))
    expect(summaries[0].max_tokens).toBe(50)
    expect(summaries[2].max_tokens).toBe(100)
    expect(compareBodies(summaries[1], summaries[2])).toEqual({
      replay: false,
      firstDifferingPath: '$ (nothing was appended)',
    })
    expect({ ...summaries[2], max_tokens: 0 }).toEqual({ ...summaries[1], max_tokens: 0 })
  })

  it('a summary that spends every cap is refused: no checkpoint, the request goes out unfolded and the conversation goes on', async () => {
    const { result, folds } = await session(12, { summaryReplies: ['truncated', 'truncated', 'truncated'] })
    expect(result.text).toBe('done')
    expect(folds[0]).toMatchObject({ committed: false, warm: true })
    expect(folds).toHaveLength(1)
    expect(folds[0]!.attempts.map((attempt) => attempt.maxTokens)).toEqual([50, 100, 200])
    expect(folds[0]!.refusal).toBe(
      'summary truncated at maxTokens 200 (an incomplete checkpoint is never committed); after 3 call(s) on the same prompt with maxTokens 50 → 100 → 200 (summaryBudget.retries 2); summaryBudget.fallbackEffort is not set, so no cold call at a lower effort was made; no checkpoint was committed',
    )
  })

  it('a byte replay whose provider reports no cache read is reported cold, with the reason', async () => {
    const { folds } = await session(12, { noCacheReads: true })
    expect(folds.length).toBeGreaterThan(0)
    for (const fold of folds)
      expect(fold).toMatchObject({
        committed: true,
        warm: false,
        coldReason: 'the provider reported no cache read for the summary call',
      })
  })

  it('a host whose rewritten history crosses the threshold gets its fold reported cold, naming the rewrite', async () => {
    // A first turn below the threshold, then the host rewrites an old message and adds a long one.
    const { result, provider: scripted } = await session(3, {})
    expect(result.text).toBe('done')
    const folds: FoldReport[] = []
    const model = wrapLanguageModel({
      model: scripted.model(),
      middleware: warmfoldMiddleware({
        contextWindow: 6_000,
        thresholdRatio: 0.6,
        maxTokens: 50,
        onFold: (fold) => folds.push(fold),
      }),
    })
    const history: ModelMessage[] = [{ role: 'user', content: 'Read the files.' }, ...result.response.messages]
    await generateText({
      model,
      system: 'You are a coding agent.',
      messages: history,
      tools: { read_file: readTool },
      stopWhen: stepCountIs(1),
    })
    const rewritten = history.map((message) =>
      message.role === 'tool'
        ? {
            ...message,
            content: message.content.map((part) =>
              part.type === 'tool-result' ? { ...part, output: { type: 'text' as const, value: '[pruned]' } } : part,
            ),
          }
        : message,
    ) as ModelMessage[]
    rewritten.push({ role: 'user', content: `Now this:\n${'a long pasted log line\n'.repeat(700)}` })
    await generateText({
      model,
      system: 'You are a coding agent.',
      messages: rewritten,
      tools: { read_file: readTool },
      stopWhen: stepCountIs(1),
    })
    expect(folds.map((fold) => fold.refusal)).toEqual([undefined])
    expect(folds[0]!.warm).toBe(false)
    expect(folds[0]!.coldReason).toMatch(
      /^the host rewrote its history since the last request: the request's message \d+ \(user\) differs from the previous request's at character \d+/,
    )
  })

  it('a refused background fold is not started again on every step: one more try only at the threshold', async () => {
    provider = await ScriptedProvider.start('openai-compatible', 12, { summaryReplies: ['tool-call', 'tool-call'] })
    const folds: FoldReport[] = []
    const model = wrapLanguageModel({
      model: provider.model(),
      middleware: warmfoldMiddleware({
        contextWindow: 6_000,
        maxTokens: 50,
        background: { startRatio: 0.5 },
        onFold: (fold) => folds.push(fold),
      }),
    })
    const result = await generateText({
      model,
      system: 'You are a coding agent.',
      prompt: 'Read the files.',
      tools: { read_file: readTool },
      stopWhen: stepCountIs(14),
    })
    expect(result.text).toBe('done')
    expect(folds.map((fold) => [fold.trigger, fold.committed])).toEqual([
      ['background', false],
      ['pressure', true],
    ])
    // The engine's summary loop ran it: the engine's sentence, word for word.
    expect(folds[0]!.refusal).toBe('summary call answered with a tool call twice; no checkpoint was committed')
  })

  it('at the threshold, a background fold still in flight is waited for up to maxWaitMs, then the call folds itself', async () => {
    let release!: () => void
    const held = new Promise<void>((resolve) => (release = resolve))
    provider = await ScriptedProvider.start('openai-compatible', 12, { holdSummaries: held })
    const folds: FoldReport[] = []
    const model = wrapLanguageModel({
      model: provider.model(),
      middleware: warmfoldMiddleware({
        contextWindow: 6_000,
        maxTokens: 50,
        background: { startRatio: 0.5, maxWaitMs: 20 },
        onFold: (fold) => folds.push(fold),
      }),
    })
    // The held background summary blocks the pressure fold's summary too (same server), so release both once the pressure fold has started.
    const watcher = setInterval(() => {
      if (provider!.requests.filter((request) => request.summary).length >= 2) {
        clearInterval(watcher)
        release()
      }
    }, 5)
    const result = await generateText({
      model,
      system: 'You are a coding agent.',
      prompt: 'Read the files.',
      tools: { read_file: readTool },
      stopWhen: stepCountIs(14),
    })
    clearInterval(watcher)
    expect(result.text).toBe('done')
    const pressure = folds.filter((fold) => fold.trigger === 'pressure')
    expect(pressure.length).toBeGreaterThan(0)
    expect(pressure[0]).toMatchObject({ committed: true, warm: true })
  })
})
