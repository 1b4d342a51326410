import { createOpenAICompatible } from '@ai-sdk/openai-compatible'
import type { LanguageModelV3 } from '@ai-sdk/provider'
import type { ModelMessage, PrepareStepFunction } from 'ai'
import { generateText, jsonSchema, pruneMessages, stepCountIs, tool, wrapLanguageModel } from 'ai'
import type { Cost, PriceProfile } from '@warmfold/prefix-cache-testkit'
import { costUsd, fillerText, PRICE_PROFILES, requestCost, sumCosts } from '@warmfold/prefix-cache-testkit'
import { warmfoldMiddleware } from '../src/index.ts'
import type { SimulatedRequest } from './simulator-server.ts'
import { COLD_SUMMARY_SYSTEM, SimulatorServer, SUMMARY_PREFIX } from './simulator-server.ts'

/** The three ways the same AI SDK host keeps its context in the window. */
export type HostStrategy = 'warmfold' | 'prune-messages' | 'cold-summary'

export const HOST_STRATEGIES: readonly HostStrategy[] = ['warmfold', 'prune-messages', 'cold-summary']
export const COMPARISON_WINDOWS: readonly number[] = [32_000, 128_000]
export const COMPARISON_STEPS = 60
export const COMPARISON_PRICE: PriceProfile = PRICE_PROFILES['anthropic-5m']

const SYSTEM = `You are a coding agent working in a TypeScript repository. ${fillerText(1, 2_000)}`
const THRESHOLD_RATIO = 0.8
const RETAIN_RATIO = 0.16

/** One scripted host run, billed by the simulator. */
export interface HostRun {
  readonly strategy: HostStrategy
  readonly window: number
  readonly completed: boolean
  /** Summary calls, in order, each with the prompt tokens it prefilled (not read from the cache). */
  readonly summaryPrefilled: readonly number[]
  /** Prefilled prompt tokens of every request. */
  readonly sessionPrefilled: number
  readonly cost: Cost
  readonly usd: number
  /** The largest prompt sent, in tokens. */
  readonly largestPrompt: number
  /** What the last request still carried: tool results verbatim, and whether a summary stands for the rest. */
  readonly lastToolResults: number
  readonly lastSummarized: boolean
}

/** The tool output of step `step`: a module of about window / 16 tokens, varying by step. */
function moduleText(window: number, path: string): string {
  const step = Number(/(\d+)/.exec(path)?.[1] ?? 0)
  const length = Math.round(((window * 4) / 16) * (0.6 + ((step * 37) % 80) / 100))
  return `// ${path}\n${fillerText(step + 100, length)}`
}

/** Tokens of messages as the hosts estimate them (4 characters per token of their JSON). */
function estimate(messages: readonly ModelMessage[]): number {
  return Math.ceil((SYSTEM.length + JSON.stringify(messages).length) / 4)
}

/** The index from which `messages` is kept: the tail worth `retain` tokens, starting at an assistant message (so no tool call loses its result). */
function retainedFrom(messages: readonly ModelMessage[], retain: number): number {
  let cut = messages.length
  let banked = 0
  while (cut > 1 && banked < retain) {
    cut -= 1
    banked += estimate([messages[cut]!])
  }
  while (cut > 1 && messages[cut]!.role !== 'assistant') cut -= 1
  return cut
}

/** The cold summary's prompt: the history as one transcript (LangChain's `summarizationMiddleware` shape). */
function transcript(messages: readonly ModelMessage[]): string {
  return messages
    .map(
      (message) =>
        `${message.role}: ${typeof message.content === 'string' ? message.content : JSON.stringify(message.content)}`,
    )
    .join('\n')
}

/** Runs the scripted host one way at `window` against a fresh simulated provider. */
export async function runHost(strategy: HostStrategy, window: number): Promise<HostRun> {
  const simulator = await SimulatorServer.start(COMPARISON_STEPS)
  try {
    const base: LanguageModelV3 = createOpenAICompatible({
      name: 'sim',
      baseURL: simulator.server.baseURL,
      apiKey: 'sim-key',
      includeUsage: true,
    }).chatModel('sim-model')
    const tools = {
      read_file: tool({
        description: 'Read a file of the repository',
        inputSchema: jsonSchema<{ path: string }>({
          type: 'object',
          properties: { path: { type: 'string' } },
          required: ['path'],
          additionalProperties: false,
        }),
        execute: async ({ path }) => moduleText(window, path),
      }),
    }
    const threshold = window * THRESHOLD_RATIO
    let prepareStep: PrepareStepFunction<typeof tools> | undefined
    let model: LanguageModelV3 = base
    if (strategy === 'warmfold')
      model = wrapLanguageModel({
        model: base,
        middleware: warmfoldMiddleware({
          contextWindow: window,
          thresholdRatio: THRESHOLD_RATIO,
          retainRatio: RETAIN_RATIO,
        }),
      })
    else if (strategy === 'prune-messages') {
      // The AI SDK's recipe: prepareStep + pruneMessages once the history nears the window.
      prepareStep = ({ messages }) =>
        estimate(messages) >= threshold
          ? {
              messages: pruneMessages({
                messages,
                reasoning: 'before-last-message',
                toolCalls: 'before-last-2-messages',
                emptyMessages: 'remove',
              }),
            }
          : {}
    } else {
      // A summary made on the side: own system prompt, no tools, the history as one transcript;
      // the host keeps it and the tail after it (AI SDK 6 forgets prepareStep's messages).
      let summary: { text: string; from: number } | undefined
      prepareStep = async ({ messages }) => {
        const view = (): ModelMessage[] =>
          summary
            ? [{ role: 'user', content: `${SUMMARY_PREFIX}\n${summary.text}` }, ...messages.slice(summary.from)]
            : messages
        if (estimate(view()) >= threshold) {
          const current = view()
          const cut = retainedFrom(current, window * RETAIN_RATIO)
          const answer = await generateText({
            model: base,
            system: COLD_SUMMARY_SYSTEM,
            prompt: transcript(current.slice(0, cut)),
            maxOutputTokens: 8192,
          })
          summary = { text: answer.text, from: messages.length - (current.length - cut) }
        }
        return summary ? { messages: view() } : {}
      }
    }
    const result = await generateText({
      model,
      system: SYSTEM,
      prompt: 'Read src/module-0.ts to src/module-59.ts one by one and report what each exports.',
      tools,
      stopWhen: stepCountIs(COMPARISON_STEPS + 5),
      ...(prepareStep ? { prepareStep } : {}),
    })
    return summarize(strategy, window, result.text === 'done', simulator.billed)
  } finally {
    await simulator.close()
  }
}

function summarize(
  strategy: HostStrategy,
  window: number,
  completed: boolean,
  billed: readonly SimulatedRequest[],
): HostRun {
  const costs = billed.map((request) =>
    requestCost(
      {
        cachedTokens: request.observation.cachedTokens,
        uncachedTokens: request.observation.uncachedTokens,
        cacheWriteTokens: request.observation.cacheWriteTokens,
        outputTokens: request.outputTokens,
      },
      COMPARISON_PRICE,
    ),
  )
  const cost = sumCosts(costs)
  const conversation = billed.filter((request) => request.observation.purpose === 'conversation')
  const last = conversation.at(-1)
  return {
    strategy,
    window,
    completed,
    summaryPrefilled: billed
      .filter((request) => request.observation.purpose === 'compaction')
      .map((request) => request.observation.uncachedTokens),
    sessionPrefilled: billed.reduce((sum, request) => sum + request.observation.uncachedTokens, 0),
    cost,
    usd: costUsd(cost, COMPARISON_PRICE) as number,
    largestPrompt: Math.max(...billed.map((request) => request.observation.promptTokens)),
    lastToolResults: last?.toolResults ?? 0,
    lastSummarized: last?.summarized ?? false,
  }
}

/** Every strategy at every window, in table order. */
export async function runComparison(): Promise<HostRun[]> {
  const runs: HostRun[] = []
  for (const window of COMPARISON_WINDOWS)
    for (const strategy of HOST_STRATEGIES) runs.push(await runHost(strategy, window))
  return runs
}

/** The README table of `runs`. */
export function comparisonTable(runs: readonly HostRun[]): string {
  const header = [
    'window',
    'host',
    'summary calls',
    'summary prefilled (each call)',
    'session prefilled',
    'cost',
    'vs cold summary',
    'largest prompt',
    'last request carries',
    'done',
  ]
  const rows = runs.map((run) => {
    const cold = runs.find((other) => other.window === run.window && other.strategy === 'cold-summary')!
    const delta =
      run.strategy === 'cold-summary'
        ? '-'
        : `${run.usd < cold.usd ? '−' : '+'}${(Math.abs(run.usd / cold.usd - 1) * 100).toFixed(1)}%`
    const carries = `${run.lastSummarized ? 'summary + ' : 'no summary, '}${run.lastToolResults} of ${COMPARISON_STEPS} tool results`
    return [
      run.window.toLocaleString('en-US'),
      run.strategy,
      String(run.summaryPrefilled.length),
      run.summaryPrefilled.length
        ? run.summaryPrefilled.map((tokens) => tokens.toLocaleString('en-US')).join(' / ')
        : '-',
      run.sessionPrefilled.toLocaleString('en-US'),
      `$${run.usd.toFixed(3)}`,
      delta,
      run.largestPrompt.toLocaleString('en-US'),
      carries,
      run.completed ? 'yes' : 'NO',
    ]
  })
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]!.length)))
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) =>
        column === 1 || column === 8 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!),
      )
      .join('  ')
      .trimEnd()
  return [line(header), widths.map((width) => '-'.repeat(width)).join('  '), ...rows.map(line)].join('\n')
}
