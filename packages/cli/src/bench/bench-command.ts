import { join, resolve } from 'node:path'
import { formatCount } from '@warmfold/cache-ledger/prefix'
import type { ProbeConnector, RunWorkloadHooks, WorkloadOptions, WorkloadRun } from '@warmfold/prefix-cache-testkit'
import { CacheProbe, CacheProbeError, runProbedWorkload, runWorkload } from '@warmfold/prefix-cache-testkit'
import type { BenchReport } from './bench-report.ts'
import { reportRun, workloadOf } from './bench-report.ts'
import { benchSessionId, checkSessionsFolder } from './check-sessions-folder.ts'
import { formatRunCost, formatTable } from './format-table.ts'
import { loadLlamaCacheServer } from './load-llama-cache-server.ts'
import type { BenchArgs } from './parse-bench-args.ts'
import { probeConnector } from './probe-dialects.ts'
import { RunError } from '../shared/run-error.ts'
import { backendFactory, describeStore, refuseHeldIds } from '../shared/session-store-spec.ts'
import type { CommandIo } from '../shared/command-io.ts'
import { UsageError } from '../shared/usage-error.ts'
import type { OutputFile } from '../shared/output-file.ts'
import { withOutputFile, writeDocument } from '../shared/output-file.ts'

/**
 * Checks `--out`, `--keep-sessions` and the probe's config, runs every window × strategy, reporting progress on
 * stderr, then prints the table (or the JSON document with `--json`) on stdout and writes
 * `--out`. Returns the exit code: 0, or 1 when a run did not complete.
 * @throws UsageError when `--out` or `--keep-sessions` cannot be written or the probe config is refused, before
 *   anything runs; RunError when `--cache llama` is asked for without its optional package
 *   (before anything runs), when the probed endpoint fails (the run stops at its first failure,
 *   nothing is printed on stdout) or `--out` cannot be written after the run (the report is
 *   printed on stdout first).
 */
export async function runBench(args: BenchArgs, io: CommandIo): Promise<{ code: number; report: BenchReport }> {
  const sessionIds = args.windows.flatMap((window) =>
    args.strategies.map((strategy) => benchSessionId(strategy, window)),
  )
  return withOutputFile(args.out, { inputs: keptFiles(args, sessionIds) }, (output) =>
    runChecked(args, io, sessionIds, output),
  )
}

/** The runs, once `--out` is open: the report on stdout, then in `output`. */
async function runChecked(
  args: BenchArgs,
  io: CommandIo,
  sessionIds: readonly string[],
  output: OutputFile | undefined,
): Promise<{ code: number; report: BenchReport }> {
  if (args.keepSessions !== undefined) await checkSessionsFolder(args.keepSessions, sessionIds)
  const newBackend = args.store ? await backendFactory(args.store) : undefined
  if (args.store && newBackend) await refuseHeldIds(args.store, newBackend(), sessionIds)
  const measure = await measurer(args.cache)
  const report: BenchReport = { version: 2, workload: workloadOf(args), runs: [] }
  const total = args.windows.length * args.strategies.length
  for (const window of args.windows) {
    for (const strategy of args.strategies) {
      const started = performance.now()
      const name = `window ${window}, strategy ${strategy}`
      io.stderr(`[${report.runs.length + 1}/${total}] ${name}…`)
      const id = benchSessionId(strategy, window)
      const kept = newBackend
        ? { sessionStore: { store: newBackend(), id } }
        : args.keepSessions === undefined
          ? {}
          : { sessionFile: { directory: resolve(args.keepSessions), id } }
      const run = await measure(
        {
          // The workload's options go by their own names in `args` (the others are not the workload's).
          ...args,
          window,
          strategy,
          // Reference strategies never fold in the background or while idle, nor write an artifact trail.
          idleCompaction: strategy === 'warmfold' && args.idleCompaction,
          backgroundFold: strategy === 'warmfold' && args.backgroundFold,
          prewarm: strategy === 'warmfold' && args.prewarm,
          artifactTrail: strategy === 'warmfold' && args.artifactTrail,
          cachePrices: { read: args.price.cacheRead, write: args.price.cacheWrite },
        },
        kept,
      ).catch((error: unknown) => {
        if (!(error instanceof CacheProbeError)) throw error
        const hint =
          error.failure === 'TIMEOUT' && args.cache.kind === 'probe'
            ? `; each request may take --probe-timeout ${args.cache.timeoutSeconds} s, ` +
              'raise it if the server is only slow'
            : ''
        throw new RunError(`${name}: ${error.message}${hint}`, { cause: error })
      })
      const entry = reportRun(strategy, run, args.price, args.cache.kind === 'simulator' ? args.latency : null)
      report.runs.push(entry)
      // The table's words and units: prefilled tokens, the cost in dollars when the price has a rate.
      const seconds = ((performance.now() - started) / 1000).toFixed(2)
      const prefilled = formatCount(entry.sessionPrefilledTokens)
      io.stderr(
        `[${report.runs.length}/${total}] ${name}: ${entry.summaryCalls.length} fold(s), ${prefilled} prefilled ` +
          `tokens, cost ${formatRunCost(entry, args.price, true)}, ${seconds} s${keptWhere(args, id)}`,
      )
    }
  }
  const document = `${JSON.stringify(report, null, 2)}\n`
  // Printed before the file is written: a failed write must not lose a long run's results.
  io.stdout(args.json ? document : `${formatTable(report)}\n`)
  if (output) await writeDocument(output, '--out', document, ' (the report is on stdout)')
  const incomplete = report.runs.filter((run) => !run.completed)
  if (incomplete.length) {
    const runs = incomplete.map((run) => `${run.strategy}@${run.window}`).join(', ')
    io.stderr(`warmfold bench: ${incomplete.length} run(s) did not complete: ${runs}`)
  }
  return { code: incomplete.length ? 1 : 0, report }
}

/** The files the run keeps its sessions in (a kept log, the SQLite database), which `--out` must not overwrite. */
function keptFiles(args: BenchArgs, ids: readonly string[]): Array<{ path: string; what: string }> {
  if (args.store?.kind === 'sqlite') return [{ path: args.store.path, what: 'the SQLite database of --store' }]
  const folder = args.keepSessions
  return folder === undefined
    ? []
    : ids.map((id) => ({ path: join(folder, `${id}.jsonl`), what: 'a session log the run keeps' }))
}

/** `, session log DIR/<id>.jsonl` or `, session <id> in sqlite:PATH`, or '' when no session is kept. */
function keptWhere(args: BenchArgs, id: string): string {
  if (args.store) return `, session ${id} in ${describeStore(args.store)}`
  return args.keepSessions === undefined ? '' : `, session log ${join(resolve(args.keepSessions), `${id}.jsonl`)}`
}

/** One probe for the whole bench, built before the first run so a refused config costs nothing. */
function probeOf(cache: Extract<BenchArgs['cache'], { kind: 'probe' }>, connect: ProbeConnector): CacheProbe {
  try {
    return new CacheProbe({
      baseURL: cache.url,
      model: cache.model,
      connect,
      timeoutMs: Math.round(cache.timeoutSeconds * 1000),
      ...(cache.keyEnv ? { apiKeyEnv: cache.keyEnv } : {}),
    })
  } catch (error) {
    throw new UsageError(`--cache-probe: ${(error as Error).message}`)
  }
}

/**
 * How each run is measured: by the simulator, a fresh embedded llama.cpp cache, or the probed endpoint. Set up before
 * the first run, so a refused probe config or a missing package costs nothing.
 */
async function measurer(
  cache: BenchArgs['cache'],
): Promise<(options: WorkloadOptions, hooks: RunWorkloadHooks) => Promise<WorkloadRun>> {
  switch (cache.kind) {
    case 'simulator':
      return runWorkload
    case 'llama': {
      const { startLlamaCacheServer } = await loadLlamaCacheServer()
      return async (options, hooks) => {
        // A fresh server per run, so one strategy's cached tokens never leak into another's.
        const server = await startLlamaCacheServer({ contextSize: LLAMA_CONTEXT_SIZE })
        try {
          return await runProbedWorkload(options, new CacheProbe({ baseURL: server.baseURL }), hooks)
        } finally {
          await server.close()
        }
      }
    }
    case 'probe': {
      const probe = probeOf(cache, await probeConnector(cache.dialect))
      return (options, hooks) => runProbedWorkload(options, probe, hooks)
    }
  }
}

/** Context of the embedded llama cache server: the 16k-window workload peaks near 45k tokens. */
const LLAMA_CONTEXT_SIZE = 65536
