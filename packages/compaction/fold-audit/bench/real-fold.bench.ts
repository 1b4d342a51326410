import type { ChildProcess } from 'node:child_process'
import { fork } from 'node:child_process'
import { once } from 'node:events'
import type { Context } from '@cordisjs/core'
import type { Agent } from '@warmfold/agent-loop'
import { afterAll, bench, describe } from 'vitest'
// Not a dependency of this package (a bench-only import, like the test kit's in fold-host.ts).
import { OpenAICompatibleAdapter } from '../../../llm/llm-openai-compatible/src/index.ts'
import { bareHost, codingSteps, copies, CpuPairs, fileCharsFor, foldNext, longSummary, PAIRS, ROUTE, runSource, scriptedHost, SPARE, SUMMARY_TOKENS, TOKEN_CHARS, WARMUP, WINDOWS } from './fold-host.ts'

// What the fold audit adds to the CPU time of a fold through a real adapter: the same 60-step
// coding session as audit.bench.ts, folded through the OpenAI-compatible adapter (the openai
// SDK) over HTTP to a chat completions server on 127.0.0.1 in another process
// (summary-server.mjs), which streams a summary of SUMMARY_TOKENS tokens one token-sized chunk
// at a time, as providers stream. The fold now also serializes the summary request and parses
// the stream. Each fold's CPU time is `process.cpuUsage()` of this process around `compactNow`
// (the server's is its own), measured in pairs as in audit.bench.ts and printed after the run;
// vitest's table is the wall time of a pair, which includes the server's work.

let server: ChildProcess | undefined
let serverURL: Promise<string> | undefined
/** The summary server's base URL; one server for every window, started on first use. */
function summaryServer(): Promise<string> {
  serverURL ??= (async () => {
    const child = fork(new URL('./summary-server.mjs', import.meta.url), [], { execArgv: [], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
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
    const pools = new Map<boolean, { ctx: Context; agents: Agent[] }>()
    const prepare = async (audit: boolean): Promise<void> => {
      if (pools.has(audit)) return
      const baseURL = await summaryServer()
      const scripted = await scriptedHost(window, steps, audit)
      contexts.push(scripted)
      const from = await runSource(scripted, steps)
      const ctx = await bareHost(audit)
      contexts.push(ctx)
      // The real adapter under the route the session was logged with.
      ctx.plugin(OpenAICompatibleAdapter, { provider: ROUTE.provider, baseURL, dialect: 'openai', models: { [ROUTE.model]: { contextWindow: window, defaultMaxTokens: 8192 } } })
      pools.set(audit, { ctx, agents: await copies(ctx, from, PAIRS + WARMUP + SPARE) })
    }
    const folds = new CpuPairs(PAIRS)
    reports.push(() => folds.report(`real-fold.bench ${window / 1000}k (OpenAI-compatible adapter, ${SUMMARY_TOKENS}-token summary)`, 'fold'))
    // The first WARMUP calls are vitest's warm-up iterations: they fold but are not recorded, nor are calls past PAIRS.
    let warm = 0
    bench('a pair of folds, with and without the audit and the trail (CPU printed after the run)', () => folds.pair(warm++ >= WARMUP, foldNext(pools.get(true), 'real-fold.bench'), foldNext(pools.get(false), 'real-fold.bench')), {
      iterations: PAIRS, time: 0, warmupIterations: WARMUP, warmupTime: 0,
      setup: async () => {
        await prepare(true)
        await prepare(false)
      },
    })
  })
}
