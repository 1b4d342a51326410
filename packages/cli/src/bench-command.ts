import { writeFile } from 'node:fs/promises'
import { startLlamaCacheServer } from '@warmfold/llama-cache-server'
import type { WorkloadOptions, WorkloadRun } from '@warmfold/prefix-cache-testkit'
import { CacheProbe, runProbedWorkload, runWorkload } from '@warmfold/prefix-cache-testkit'
import type { BenchReport } from './bench-report.ts'
import { reportRun, workloadOf } from './bench-report.ts'
import { formatTable } from './format-table.ts'
import type { BenchArgs } from './parse-bench-args.ts'

/** Where the command writes. */
export interface CommandIo {
  stdout(text: string): void
  stderr(text: string): void
}

/**
 * Runs every window × strategy, reporting progress on stderr, then prints the table (or the
 * JSON document with `--json`) on stdout and writes `--out`. Returns the exit code: 0, or 1 when
 * a run did not complete.
 */
export async function runBench(args: BenchArgs, io: CommandIo): Promise<{ code: number; report: BenchReport }> {
  const report: BenchReport = { version: 1, workload: workloadOf(args), runs: [] }
  const total = args.windows.length * args.strategies.length
  for (const window of args.windows) {
    for (const strategy of args.strategies) {
      const started = performance.now()
      io.stderr(`[${report.runs.length + 1}/${total}] window ${window}, strategy ${strategy}…`)
      const run = await measure(args, { window, steps: args.steps, strategy, effort: args.effort, temperature: args.temperature, stop: args.stop, profile: args.profile, pruner: args.pruner, summaryRoute: args.summaryRoute })
      const entry = reportRun(strategy, run)
      report.runs.push(entry)
      io.stderr(`[${report.runs.length}/${total}] window ${window}, strategy ${strategy}: ${entry.summaryCalls.length} fold(s), ${entry.sessionUncachedTokens} uncached tokens, ${((performance.now() - started) / 1000).toFixed(2)} s`)
    }
  }
  const document = `${JSON.stringify(report, null, 2)}\n`
  if (args.out) await writeFile(args.out, document)
  io.stdout(args.json ? document : `${formatTable(report)}\n`)
  const incomplete = report.runs.filter((run) => !run.completed)
  if (incomplete.length) io.stderr(`warmfold bench: ${incomplete.length} run(s) did not complete: ${incomplete.map((run) => `${run.strategy}@${run.window}`).join(', ')}`)
  return { code: incomplete.length ? 1 : 0, report }
}

/** One run, measured by the simulator, a fresh embedded llama.cpp cache, or the probed endpoint. */
async function measure(args: BenchArgs, options: WorkloadOptions): Promise<WorkloadRun> {
  const cache = args.cache
  switch (cache.kind) {
    case 'simulator':
      return runWorkload(options)
    case 'llama': {
      // A fresh server per run, so one strategy's cached tokens never leak into another's.
      const server = await startLlamaCacheServer({ contextSize: LLAMA_CONTEXT_SIZE })
      try {
        return await runProbedWorkload(options, new CacheProbe({ baseURL: server.baseURL }))
      } finally {
        await server.close()
      }
    }
    case 'probe':
      return runProbedWorkload(options, new CacheProbe({ baseURL: cache.url, model: cache.model, dialect: cache.dialect, ...(cache.keyEnv ? { apiKeyEnv: cache.keyEnv } : {}) }))
  }
}

/** Context of the embedded llama cache server: the 16k-window workload peaks near 45k tokens. */
export const LLAMA_CONTEXT_SIZE = 65536
