import type { Context } from '@cordisjs/core'
import type { Agent } from '@warmfold/agent-loop'
import { afterAll, bench, describe } from 'vitest'
import type { LoggedMessage } from '@warmfold/fold-audit'
import { ArtifactExtractor, auditFold, buildArtifactTrail, checkpointArtifacts } from '@warmfold/fold-audit'
import type { FoldSetup } from './fold-host.ts'
import {
  codingSteps,
  copies,
  CpuRounds,
  fileCharsFor,
  FOLD_COMPARISONS,
  foldNext,
  longSummary,
  REQUIRED,
  ROUNDS,
  runSource,
  scriptedHost,
  SPARE,
  SUMMARY,
  surface,
  WARMUP,
  WINDOWS,
} from './fold-host.ts'

// What the fold audit adds to a fold's CPU time. For each window, a 60-step coding session (the
// labelled corpus's tool calls and outputs, a source file read every third step) is run once
// through a real warmfold host, then copied into fresh sessions on three hosts: one with the
// audit and the artifact trail (the defaults), one with the trail only (`audit.enabled: false`)
// and one with neither. Each iteration folds one copy on each host with
// BasicCompactionEngine.compactNow (token meter, pruner, invariant checker, cache ledger; only
// the model's content is scripted, so a fold's CPU is the engine's own work), and the CPU time
// of each fold is printed after the run as medians and the median round-by-round difference,
// against neither (the audit and the trail together) and against the trail only (the audit),
// and, timed inside each fold, the audit's own call (`FoldAuditor.audit`) with its share of the
// fold, which varies far less than a difference of two folds (it leaves out logging the audit's
// event and the garbage it leaves, which the differences include). The engine reads each message's artifacts when it is logged (the read-ahead), so a fold merges
// them: the second bench times the audit's part of a fold on its own, the third the reading of
// a replaced checkpoint's text that a fold does only when the audit that wrote it logged no list
// of what it holds, the fourth what the read-ahead costs over the whole session, outside any fold.

/** Pairs of whole sessions measured (60 steps each, no fold). */
const SESSIONS = 6

const contexts: Context[] = []
const reports: (() => string)[] = []
afterAll(async () => {
  for (const ctx of contexts.splice(0)) await ctx.stop()
  for (const report of reports) console.log(report())
})

for (const window of WINDOWS) {
  const steps = codingSteps(60, fileCharsFor(window))
  describe(`a 60-step coding session, ${window / 1000}k window`, () => {
    const pools = new Map<FoldSetup, { ctx: Context; agents: Agent[] }>()
    let region: LoggedMessage[] = []
    let tail: LoggedMessage[] = []
    const prepare = (setup: FoldSetup) => async (): Promise<void> => {
      if (pools.has(setup)) return
      const ctx = await scriptedHost(window, steps, setup)
      contexts.push(ctx)
      const from = await runSource(ctx, steps)
      pools.set(setup, { ctx, agents: await copies(ctx, from, ROUNDS + WARMUP + SPARE) })
      if (region.length === 0) {
        const messages = surface(from)
        region = messages.slice(0, -4)
        tail = messages.slice(-4)
      }
    }
    const folds = new CpuRounds(ROUNDS, ['audit and trail', 'trail only', 'neither'] as const)
    reports.push(() =>
      [
        ...folds.report(`audit.bench ${window / 1000}k (scripted model)`, 'fold', FOLD_COMPARISONS),
        ...folds.auditReport(`audit.bench ${window / 1000}k (scripted model)`, 'fold'),
      ].join('\n'),
    )
    // The first WARMUP calls are vitest's warm-up iterations: they fold but are not recorded, nor are calls past ROUNDS.
    let warm = 0
    const fold = (setup: FoldSetup) => foldNext(pools.get(setup), 'audit.bench')
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
          for (const setup of folds.setups) await prepare(setup)()
        },
      },
    )
    // The region's messages read ahead, as the engine's read-ahead leaves them for a fold.
    const readAhead = new ArtifactExtractor()
    bench(
      'at fold time: merge the read-ahead + buildArtifactTrail + auditFold',
      () => {
        const extraction = readAhead.extract(region)
        const trail = buildArtifactTrail(extraction)
        const audit = auditFold({
          folded: extraction.artifacts,
          checkpointText: `${SUMMARY}\n\n${trail.text}`,
          visibleAfter: tail.map(({ message }) => message),
          requiredSections: REQUIRED,
        })
        if (audit.classes.path.seen === 0) throw new Error('audit.bench: the region has no paths')
      },
      {
        iterations: 50,
        time: 0,
        warmupIterations: 5,
        warmupTime: 0,
        setup: async () => {
          await prepare('audit and trail')()
          for (const { message } of [...region, ...tail]) readAhead.read(message)
        },
      },
    )
    // A fold whose previous checkpoint's audit logged no `heldInCheckpoint` (a log written with the
    // audit off, or before the list) reads that checkpoint's text: here a 2,000-token summary
    // (real-fold.bench's) and the region's trail.
    let checkpoint = ''
    bench(
      'without a logged list: read the replaced checkpoint (2,000-token summary + trail)',
      () => {
        if (checkpointArtifacts(checkpoint).length === 0)
          throw new Error('audit.bench: the checkpoint has no artifacts')
      },
      {
        iterations: 50,
        time: 0,
        warmupIterations: 5,
        warmupTime: 0,
        setup: async () => {
          await prepare('audit and trail')()
          for (const { message } of [...region, ...tail]) readAhead.read(message)
          checkpoint = `${longSummary()}\n\n${buildArtifactTrail(readAhead.extract(region)).text}`
        },
      },
    )
    // What the read-ahead costs a session that never folds: the whole 60-step session, run on each
    // host and closed (which also clears the read-ahead's line cache, so each run reads cold).
    const sessions = new CpuRounds(SESSIONS, ['audit and trail', 'neither'] as const)
    reports.push(() =>
      sessions
        .report(`audit.bench ${window / 1000}k (scripted model)`, '60-step session without a fold', [
          ['audit and trail', 'neither'],
        ])
        .join('\n'),
    )
    let runs = 0
    const run = (setup: FoldSetup) => async (): Promise<void> => {
      const ctx = pools.get(setup)!.ctx
      const session = await runSource(ctx, steps, `run-${runs}-${setup.replaceAll(' ', '-')}`)
      await new Promise((done) => setImmediate(done))
      await ctx.sessions.close(session)
    }
    bench(
      'a pair of 60-step sessions without a fold, with the audit and the trail and with neither (CPU printed after the run)',
      () => sessions.round(runs++ >= 1, { 'audit and trail': run('audit and trail'), neither: run('neither') }),
      {
        iterations: SESSIONS,
        time: 0,
        warmupIterations: 1,
        warmupTime: 0,
        setup: async () => {
          await prepare('audit and trail')()
          await prepare('neither')()
        },
      },
    )
    bench(
      'the read-ahead: a new extractor reads every message of the session (no fold)',
      () => {
        const extractor = new ArtifactExtractor()
        for (const { message } of [...region, ...tail]) extractor.read(message)
      },
      { iterations: 10, time: 0, warmupIterations: 2, warmupTime: 0, setup: prepare('audit and trail') },
    )
  })
}
