import type { ChildProcess } from 'node:child_process'
import { fork } from 'node:child_process'
import { once } from 'node:events'
import type { Context } from '@cordisjs/core'
import type { Agent } from '@warmfold/agent-loop'
import { afterAll, bench, describe } from 'vitest'
import { OpenAICompatibleAdapter } from '@warmfold/llm-openai-compatible'
import type { FoldSetup } from './fold-host.ts'
import {
  bareHost,
  codingSteps,
  copies,
  CpuRounds,
  fileCharsFor,
  FOLD_COMPARISONS,
  foldNext,
  longSummary,
  ROUNDS,
  ROUTE,
  runSource,
  scriptedHost,
  SPARE,
  SUMMARY_TOKENS,
  TOKEN_CHARS,
  WARMUP,
  WINDOWS,
} from './fold-host.ts'

// What the fold audit adds to the CPU time of a fold through a real adapter: the same 60-step
// coding session as audit.bench.ts, folded through the OpenAI-compatible adapter (the openai
// SDK) over HTTP to a chat completions server on 127.0.0.1 in another process
// (summary-server.mjs), which streams a summary of SUMMARY_TOKENS tokens one token-sized chunk
// at a time, as providers stream. The fold now also serializes the summary request and parses
// the stream. Each fold's CPU time is `process.cpuUsage()` of this process around `compactNow`
// (the server's is its own), measured in rounds of three hosts as in audit.bench.ts and printed
// after the run with the audit's own call timed inside each fold; vitest's table is the wall time of a round, which includes the server's work.

let server: ChildProcess | undefined
let serverURL: Promise<string> | undefined
/** The summary server's base URL; one server for every window, started on first use. */
function summaryServer(): Promise<string> {
  serverURL ??= (async () => {
    const child = fork(new URL('./summary-server.mjs', import.meta.url), [], {
      execArgv: [],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    })
    server = child
    child.send({ summary: longSummary(), tokenChars: TOKEN_CHARS })
    const exited = once(child, 'exit').then(([code]) => {
      throw new Error(`real-fold.bench: summary-server.mjs exited with code ${code} before it listened`)
    })
    const [reply] = (await Promise.race([once(child, 'message'), exited])) as [{ port: number }]
    return `http://127.0.0.1:${reply.port}/v1`
  })()
  return serverURL
}

const contexts: Context[] = []
const reports: (() => string)[] = []
afterAll(async () => {
  for (const ctx of contexts.splice(0)) await ctx.stop()
  server?.disconnect()
  for (const report of reports) console.log(report())
})

for (const window of WINDOWS) {
  const steps = codingSteps(60, fileCharsFor(window))
  describe(`a 60-step coding session folded through the OpenAI-compatible adapter, ${window / 1000}k window`, () => {
    const pools = new Map<FoldSetup, { ctx: Context; agents: Agent[] }>()
    const prepare = async (setup: FoldSetup): Promise<void> => {
      if (pools.has(setup)) return
      const baseURL = await summaryServer()
      const scripted = await scriptedHost(window, steps, setup)
      contexts.push(scripted)
      const from = await runSource(scripted, steps)
      const ctx = await bareHost(setup)
      contexts.push(ctx)
      // The real adapter under the route the session was logged with.
      ctx.plugin(OpenAICompatibleAdapter, {
        provider: ROUTE.provider,
        baseURL,
        dialect: 'openai',
        models: { [ROUTE.model]: { contextWindow: window, defaultMaxTokens: 8192 } },
      })
      pools.set(setup, { ctx, agents: await copies(ctx, from, ROUNDS + WARMUP + SPARE) })
    }
    const folds = new CpuRounds(ROUNDS, ['audit and trail', 'trail only', 'neither'] as const)
    reports.push(() =>
      [
        ...folds.report(
          `real-fold.bench ${window / 1000}k (OpenAI-compatible adapter, ${SUMMARY_TOKENS}-token summary)`,
          'fold',
          FOLD_COMPARISONS,
        ),
        ...folds.auditReport(
          `real-fold.bench ${window / 1000}k (OpenAI-compatible adapter, ${SUMMARY_TOKENS}-token summary)`,
          'fold',
        ),
      ].join('\n'),
    )
    // The first WARMUP calls are vitest's warm-up iterations: they fold but are not recorded, nor are calls past ROUNDS.
    let warm = 0
    const fold = (setup: FoldSetup) => foldNext(pools.get(setup), 'real-fold.bench')
    bench(
      'a round of folds: with the audit and the trail, the trail only, neither (CPU printed after the run)',
      () =>
        folds.round(warm++ >= WARMUP, {
          'audit and trail': fold('audit and trail'),
          'trail only': fold('trail only'),
          neither: fold('neither'),
        }),
      {
        iterations: ROUNDS,
        time: 0,
        warmupIterations: WARMUP,
        warmupTime: 0,
        setup: async () => {
          for (const setup of folds.setups) await prepare(setup)
        },
      },
    )
  })
}
