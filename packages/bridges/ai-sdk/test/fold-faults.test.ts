import type { ModelMessage } from 'ai'
import { generateText, jsonSchema, stepCountIs, tool, wrapLanguageModel } from 'ai'
import { afterEach, describe, expect, it } from 'vitest'
import type { CacheReport, FoldReport, WarmfoldMiddlewareOptions } from '../src/index.ts'
import { memoryFoldStore, warmfoldMiddleware } from '../src/index.ts'
import type { ScriptedOptions } from './scripted-provider.ts'
import { ScriptedProvider } from './scripted-provider.ts'

const WINDOW = 6_000
const SYSTEM = 'You are a coding agent.'

const readTool = tool({
  description: 'Read a file',
  inputSchema: jsonSchema<{ path: string }>({
    type: 'object',
    properties: { path: { type: 'string' } },
    required: ['path'],
  }),
  execute: async ({ path }) => `// ${path}\n${'export const value = 1\n'.repeat(60)}`,
})

const tools = { read_file: readTool }

let provider: ScriptedProvider | undefined
afterEach(async () => {
  await provider?.close()
  provider = undefined
})

interface Harness {
  readonly scripted: ScriptedProvider
  readonly model: ReturnType<typeof wrapLanguageModel>
  readonly folds: FoldReport[]
  readonly reports: CacheReport[]
}

/** A scripted server that answers like a provider with a 6,000-token window, and the wrapped model. */
async function harness(
  steps: number,
  scripted: ScriptedOptions,
  options: WarmfoldMiddlewareOptions = {},
): Promise<Harness> {
  provider = await ScriptedProvider.start('openai-compatible', steps, { window: WINDOW, ...scripted })
  const folds: FoldReport[] = []
  const reports: CacheReport[] = []
  const model = wrapLanguageModel({
    model: provider.model(),
    middleware: warmfoldMiddleware({
      contextWindow: WINDOW,
      maxTokens: 50,
      onFold: (fold) => folds.push(fold),
      onCacheReport: (report) => reports.push(report),
      ...options,
    }),
  })
  return { scripted: provider, model, folds, reports }
}

/** A tool loop: one user message, then tool results only, until the model says `done`. */
function toolLoop(model: Harness['model'], steps: number, messages?: ModelMessage[]) {
  return generateText({
    model,
    system: SYSTEM,
    ...(messages ? { messages } : { prompt: 'Read the files.' }),
    tools,
    stopWhen: stepCountIs(steps + 2),
  })
}

/** The kinds of the requests the server received, in order: `c` a conversation request, `s` a summary call. */
function sequence(scripted: ScriptedProvider): string {
  return scripted.requests.map((request) => (request.summary ? 's' : 'c')).join('')
}

describe('a fold whose provider read almost nothing is cold', { timeout: 30_000 }, () => {
  it('a byte replay that read 40 of ~4,700 tokens is cold with cause provider, by the cache ledger’s rule', async () => {
    const { model, folds } = await harness(12, { summaryCachedTokens: 40 })
    expect((await toolLoop(model, 12)).text).toBe('done')
    expect(folds.length).toBeGreaterThan(0)
    for (const fold of folds) {
      expect(fold).toMatchObject({ committed: true, warm: false, coldCause: 'provider' })
      expect(fold.appendedAt).toMatch(/^\$\.messages\[\d+\]$/)
      expect(fold.coldReason).toMatch(
        /^the provider read 40 cached tokens for the summary call where the previous request it replays holds about [\d,]+: short by more than providerToleranceTokens \(1,024\) and 5 %$/,
      )
    }
  })

  it('a read short by less than providerToleranceTokens stays warm', async () => {
    const { model, folds } = await harness(12, { summaryCachedTokens: 40 }, { providerToleranceTokens: 6_000 })
    expect((await toolLoop(model, 12)).text).toBe('done')
    expect(folds.length).toBeGreaterThan(0)
    for (const fold of folds) {
      expect(fold).toMatchObject({ committed: true, warm: true })
      expect(fold.coldCause).toBeUndefined()
    }
  })

  it('refuses a providerToleranceTokens or backOffCalls that is not a non-negative integer, naming it', () => {
    expect(() => warmfoldMiddleware({ contextWindow: WINDOW, providerToleranceTokens: -1 })).toThrow(
      'warmfoldMiddleware options: providerToleranceTokens must be an integer from 0 to 2147483647, got -1',
    )
    expect(() => warmfoldMiddleware({ contextWindow: WINDOW, backOffCalls: Number.NaN })).toThrow(
      'warmfoldMiddleware options: backOffCalls must be an integer from 0 to 2147483647, got NaN',
    )
  })
})

describe('the fold back-off and what lifts it', { timeout: 30_000 }, () => {
  // Each tool step adds about 7 % of the window here: a threshold at 50 % leaves room for a back-off.
  const roomy = { thresholdRatio: 0.5 }

  it('a transient summary-call error in a tool loop backs off for backOffCalls calls, then folds before the context limit', async () => {
    // The server refuses any request over its 6,000-token window, as a provider does.
    const { scripted, model, folds } = await harness(20, { failingSummaries: [0] }, roomy)
    const result = await toolLoop(model, 20)
    expect(result.text).toBe('done')
    for (const request of scripted.requests) expect(request.promptTokens).toBeLessThanOrEqual(WINDOW)
    expect(folds[0]).toMatchObject({ committed: false, trigger: 'pressure', backOff: { kind: 'failed', calls: 2 } })
    expect(folds[0]!.refusal).toMatch(/^summary call failed: .*overloaded.*; no checkpoint was committed$/)
    expect(folds[0]!.attempts.map((attempt) => attempt.finishReason)).toEqual(['error'])
    expect(folds[1]).toMatchObject({ committed: true, warm: true })
    // The failed summary call, the call it was made for and two more sent unfolded, then the retry.
    const first = sequence(scripted).indexOf('s')
    expect(sequence(scripted).slice(first, first + 6)).toBe('scccsc')
  })

  it('backOffCalls: 0 tries again on the very next call', async () => {
    const { scripted, model, folds } = await harness(20, { failingSummaries: [0] }, { ...roomy, backOffCalls: 0 })
    expect((await toolLoop(model, 20)).text).toBe('done')
    expect(folds[0]).toMatchObject({ committed: false, backOff: { kind: 'failed', calls: 0 } })
    const first = sequence(scripted).indexOf('s')
    expect(sequence(scripted).slice(first, first + 4)).toBe('scsc')
  })

  it('a long back-off ends at the last call whose fold still fits the window', async () => {
    const { scripted, model, folds } = await harness(20, { failingSummaries: [0] }, { ...roomy, backOffCalls: 100 })
    expect((await toolLoop(model, 20)).text).toBe('done')
    for (const request of scripted.requests) expect(request.promptTokens).toBeLessThanOrEqual(WINDOW)
    expect(folds.map((fold) => fold.committed).slice(0, 2)).toEqual([false, true])
    // It backed off (the call of the failed fold and at least one more went unfolded), then retried long before 100 calls.
    const kinds = sequence(scripted)
    const failed = kinds.indexOf('s')
    const retry = kinds.indexOf('s', failed + 1)
    expect(kinds.slice(failed, retry)).toMatch(/^sc{2,}$/)
  })

  it('an error the provider calls not retryable backs off like a refusal: until the next user message', async () => {
    const { scripted, model, folds } = await harness(12, {
      failingSummaries: [0],
      failingStatus: 400,
      window: undefined,
    })
    // No window on this server: the tool loop outgrows the threshold without folding again.
    const result = await toolLoop(model, 12)
    expect(result.text).toBe('done')
    expect(folds).toHaveLength(1)
    expect(folds[0]).toMatchObject({ committed: false, backOff: { kind: 'refused' } })
    expect(sequence(scripted).match(/s/g)).toHaveLength(1)
  })

  it('a refused fold holds through the tool loop (one paid summary per user message) and a new user message lifts it', async () => {
    const truncated = ['truncated', 'truncated', 'truncated'] as const
    const { scripted, model, folds } = await harness(11, { summaryReplies: truncated }, roomy)
    const first = await toolLoop(model, 11)
    expect(first.text).toBe('done')
    expect(folds).toHaveLength(1)
    expect(folds[0]).toMatchObject({ committed: false, backOff: { kind: 'refused' } })
    // The ladder's three calls, then no summary call for the rest of the loop although every call is over the threshold.
    const loop = sequence(scripted)
    expect(loop.match(/s/g)).toHaveLength(3)
    expect(loop.slice(loop.indexOf('sss') + 3)).toMatch(/^c{2,}$/)
    const history: ModelMessage[] = [
      { role: 'user', content: 'Read the files.' },
      ...first.response.messages,
      { role: 'user', content: 'Now tell me what they export.' },
    ]
    const second = await generateText({
      model,
      system: SYSTEM,
      messages: history,
      tools: { read_file: readTool },
      stopWhen: stepCountIs(1),
    })
    expect(second.text).toBe('done')
    expect(folds).toHaveLength(2)
    expect(folds[1]).toMatchObject({ committed: true, trigger: 'pressure' })
  })
})

describe('one fold in flight per conversation', { timeout: 30_000 }, () => {
  it('two branches sent at once over the threshold share one summary call and one checkpoint; each follow-up extends its branch', async () => {
    const { scripted, model, folds, reports } = await harness(6, {})
    // A first turn below the threshold: the request both branches extend.
    const turn = await toolLoop(model, 6)
    expect(turn.text).toBe('done')
    expect(folds).toEqual([])
    const history: ModelMessage[] = [{ role: 'user', content: 'Read the files.' }, ...turn.response.messages]
    const branch = (name: string): ModelMessage[] => [
      ...history,
      { role: 'user', content: `Option ${name}: ${`compare the files against the plan ${name}\n`.repeat(260)}` },
    ]
    const before = scripted.requests.length
    const answers = await Promise.all(
      ['A', 'B'].map((name) =>
        generateText({ model, system: SYSTEM, messages: branch(name), tools, stopWhen: stepCountIs(1) }),
      ),
    )
    expect(answers.map((answer) => answer.text)).toEqual(['done', 'done'])
    const sent = scripted.requests.slice(before)
    // One summary call, then both branches carry its checkpoint.
    expect(sent.map((request) => (request.summary ? 's' : 'c')).join('')).toBe('scc')
    expect(folds).toHaveLength(1)
    expect(folds[0]).toMatchObject({ committed: true, trigger: 'pressure', warm: true })
    const checkpoints = sent.slice(1).map((request) => JSON.stringify((request.recorded.json.messages as unknown[])[1]))
    expect(checkpoints[0]).toContain('summary call 1')
    expect(checkpoints[1]).toBe(checkpoints[0])
    const relations = reports.filter((report) => report.kind === 'conversation').map((report) => report.relation)
    expect(relations.slice(-2)).toEqual(['fold', 'fold'])
    // Each branch's follow-up extends the request that branch sent: nothing is blamed on the host.
    await Promise.all(
      ['A', 'B'].map((name, index) =>
        generateText({
          model,
          system: SYSTEM,
          messages: [...branch(name), ...answers[index]!.response.messages, { role: 'user', content: 'Go on.' }],
          tools,
          stopWhen: stepCountIs(1),
        }),
      ),
    )
    const followUps = reports.filter((report) => report.kind === 'conversation').slice(-2)
    expect(followUps.map((report) => report.relation)).toEqual(['extends', 'extends'])
    expect(scripted.requests.filter((request) => request.summary)).toHaveLength(1)
  })

  it('a branch at the threshold while the other branch’s summary call fails shares its back-off: still one summary call', async () => {
    const { scripted, model, folds } = await harness(6, { failingSummaries: [0] })
    const turn = await toolLoop(model, 6)
    const history: ModelMessage[] = [{ role: 'user', content: 'Read the files.' }, ...turn.response.messages]
    const before = scripted.requests.length
    await Promise.all(
      ['A', 'B'].map((name) =>
        generateText({
          model,
          system: SYSTEM,
          messages: [...history, { role: 'user', content: `Option ${name}: ${'check the plan\n'.repeat(700)}` }],
          tools,
          stopWhen: stepCountIs(1),
        }),
      ),
    )
    expect(
      scripted.requests
        .slice(before)
        .map((request) => (request.summary ? 's' : 'c'))
        .join(''),
    ).toBe('scc')
    expect(folds).toHaveLength(1)
    expect(folds[0]).toMatchObject({ committed: false, backOff: { kind: 'failed', calls: 2 } })
  })

  it('a branch waiting for the other branch’s fold stays abortable by its own host', async () => {
    let release!: () => void
    const held = new Promise<void>((resolve) => (release = resolve))
    // A call reads the store right before it looks for a fold in flight: `onLoad` sees it.
    const records = memoryFoldStore()
    let onLoad: (() => void) | undefined
    const store = { load: () => (onLoad?.(), records.load()), append: records.append }
    const { scripted, model, folds } = await harness(6, { holdSummaries: held }, { store })
    const turn = await toolLoop(model, 6)
    const history: ModelMessage[] = [{ role: 'user', content: 'Read the files.' }, ...turn.response.messages]
    const branch = (name: string, abortSignal?: AbortSignal) =>
      generateText({
        model,
        system: SYSTEM,
        messages: [...history, { role: 'user', content: `Option ${name}: ${'check the plan\n'.repeat(700)}` }],
        tools,
        stopWhen: stepCountIs(1),
        ...(abortSignal ? { abortSignal } : {}),
      })
    const before = scripted.requests.length
    const first = branch('A')
    // Once the first branch's summary call is at the server (and held there), the second branch arrives and waits.
    while (!scripted.requests.slice(before).some((request) => request.summary))
      await new Promise((resolve) => setTimeout(resolve, 5))
    const controller = new AbortController()
    const loaded = new Promise<void>((resolve) => (onLoad = resolve))
    const second = branch('B', controller.signal)
    await loaded
    // The load settles, then the call finds the fold in flight and waits, all before this timer fires.
    await new Promise((resolve) => setTimeout(resolve, 0))
    controller.abort(new Error('the user cancelled branch B'))
    await expect(second).rejects.toThrow('the user cancelled branch B')
    release()
    expect((await first).text).toBe('done')
    expect(folds).toHaveLength(1)
    // Branch B never reached the server: one summary call, one conversation request.
    expect(
      scripted.requests
        .slice(before)
        .map((request) => (request.summary ? 's' : 'c'))
        .join(''),
    ).toBe('sc')
  })
})
