import { Context } from '@cordisjs/core'
import type { Agent } from '@warmfold/agent-loop'
import type { GenerateOptions } from '@warmfold/llm'
import { textBlock, toolCallBlock } from '@warmfold/llm'
import type { ScriptedReply } from '@warmfold/llm/testing'
import { ScriptedAdapter } from '@warmfold/llm/testing'
import type { Session } from '@warmfold/session'
import { afterAll, bench, describe } from 'vitest'
// The test kit depends on the compaction engine, which depends on this package, so a
// devDependency on either would make a workspace cycle: like the cache ledger's overhead bench,
// this one reaches the kit's source directly to mount a real warmfold host.
import { mountWarmfoldHost } from '../../../testing/prefix-cache-testkit/src/mount-warmfold-host.ts'
import type { LoggedMessage } from '../src/index.ts'
import { ArtifactExtractor, auditFold, buildArtifactTrail } from '../src/index.ts'
import type { CodingStep } from './coding-session.ts'
import { codingSteps } from './coding-session.ts'

// What the fold audit adds to a fold's CPU time. For each window, a 60-step coding session (the
// labelled corpus's tool calls and outputs, a source file read every third step) is run once
// through a real warmfold host, then copied into fresh sessions; each iteration folds one copy
// with BasicCompactionEngine.compactNow (token meter, pruner, invariant checker, cache ledger;
// only the model's content is scripted), once on a host with the audit and the artifact trail
// (the defaults) and once on a host with both off. The difference of the two means is what the
// audit costs a fold. The engine reads each message's artifacts when it is logged (the
// read-ahead), so a fold merges them: the third bench times the audit's part of a fold on its
// own, the fourth what the read-ahead costs over the whole session, outside any fold.

const ROUTE = { provider: 'scripted', model: 'coder' } as const
const SUMMARY = [
  '## Goal and Intent', '- Fix the failing checkout and billing tests; keep the public API.',
  '## Key Decisions', '- Read each module before changing it.',
  '## Files and Code', '- src/m0/cart/index.ts, src/m3/billing/invoice.ts', '## Errors and Fixes', "- TS2322: Type 'string' is not assignable to type 'number'",
  '## Pending Work', '- Remaining modules.', '## Current Work', '- Reading handlers.', '## Next Step', '- Run `pnpm vitest run src/math`.',
  '## Critical Context', '- Tests run with pnpm test.',
].join('\n')
const REQUIRED = ['Goal and Intent', 'Key Decisions', 'Files and Code', 'Errors and Fixes', 'Pending Work', 'Current Work', 'Next Step', 'Critical Context']

/** The windows measured (`FOLD_AUDIT_BENCH_WINDOWS=32000,128000` to choose). */
const WINDOWS = (process.env.FOLD_AUDIT_BENCH_WINDOWS ?? '32000,128000').split(',').map(Number)
/** Iterations of each fold bench (each needs a fresh copy of the session). */
const FOLDS = 20
/** Warm-up folds before them (the JIT), from the same pool. */
const WARMUP = 3

/** A host with a scripted model that walks `steps` (one tool call per request) and summarizes when asked; `audit` false turns the audit and the trail off. */
async function host(window: number, steps: readonly CodingStep[], audit: boolean): Promise<Context> {
  const ctx = new Context()
  await ctx.start()
  mountWarmfoldHost(ctx, {
    pruner: { thresholdChars: 8192, headChars: 4096, tailChars: 1024 },
    engineConfig: { auto: false, ...(audit ? {} : { audit: { enabled: false }, artifactTrail: { enabled: false } }) },
  })
  const reply = (request: GenerateOptions): ScriptedReply => {
    if (request.purpose === 'compaction') return { content: SUMMARY }
    const done = request.messages.filter((message) => message.role === 'assistant').length
    const step = steps[done]
    if (step === undefined) return { content: 'Done.' }
    return { content: [textBlock(`Step ${done}.`), toolCallBlock(`call-${done}`, step.name, step.arguments)] }
  }
  ctx.llm.registerAdapter(ROUTE.provider, new ScriptedAdapter({ models: { [ROUTE.model]: { contextWindow: window, defaultMaxTokens: 8192 } }, responses: reply }))
  for (const name of new Set(steps.map((step) => step.name))) {
    ctx.tools.register({ name, description: `The ${name} tool.`, parameters: { type: 'object' }, execute: (_args, context) => steps[Number(context.toolCallId.slice('call-'.length))]!.result })
  }
  return ctx
}

/** Runs the scripted session once (`auto: false`: nothing folds while it runs). */
async function source(ctx: Context, steps: readonly CodingStep[]): Promise<Session> {
  const agent = await ctx.agentLoop.create('source', { ...ROUTE, system: 'You are a careful coding agent.', maxSteps: steps.length + 5 })
  agent.followup(steps[0]?.userBefore ?? 'Fix the failing tests.')
  await agent.whenIdle()
  return agent.session
}

/** A fresh copy of `from` as an agent of `ctx`, ready to fold. */
async function copy(ctx: Context, from: Session, id: string): Promise<Agent> {
  const session = await ctx.sessions.create(id)
  const append = session.append as (type: string, data: unknown, ...intent: unknown[]) => unknown
  for (const event of from.events) append.call(session, event.type, event.data, ...(event.surface ? [event.surface] : []))
  return ctx.agentLoop.create(id, { ...ROUTE, system: 'You are a careful coding agent.' })
}

/** The surface messages of `session` with their seqs. */
function surface(session: Session): LoggedMessage[] {
  return session.surface.nodes.map((seq) => ({ seq, message: (session.eventAt(seq)!.data as { message: LoggedMessage['message'] }).message }))
}

const contexts: Context[] = []
afterAll(async () => {
  for (const ctx of contexts.splice(0)) await ctx.stop()
})

for (const window of WINDOWS) {
  // Every third step reads a file sized so that the session fills about 80 % of the window (4 characters a token).
  const steps = codingSteps(60, Math.max(2000, Math.round((window * 4 * 0.8) / 20) - 1500))
  describe(`a 60-step coding session, ${window / 1000}k window`, () => {
    const pools = new Map<boolean, { ctx: Context; agents: Agent[] }>()
    let region: LoggedMessage[] = []
    let tail: LoggedMessage[] = []
    const prepare = (audit: boolean) => async (): Promise<void> => {
      if (pools.has(audit)) return
      const ctx = await host(window, steps, audit)
      contexts.push(ctx)
      const from = await source(ctx, steps)
      const agents: Agent[] = []
      for (let index = 0; index < FOLDS + WARMUP + 1; index++) agents.push(await copy(ctx, from, `copy-${index}`))
      pools.set(audit, { ctx, agents })
      // The engine reads logged messages in the next macrotask; in a session, turns pass between
      // logging and folding. Here the copies were logged just now: let the read-ahead run.
      await new Promise((done) => setImmediate(done))
      if (region.length === 0) {
        const messages = surface(from)
        region = messages.slice(0, -4)
        tail = messages.slice(-4)
      }
    }
    const fold = (audit: boolean) => async (): Promise<void> => {
      const pool = pools.get(audit)
      const agent = pool?.agents.pop()
      if (pool === undefined || agent === undefined) throw new Error('audit.bench: the session pool is empty; raise its size to the iterations + warmup')
      const result = await pool.ctx.compaction.compactNow(agent)
      if (result === null) throw new Error('audit.bench: the fold folded nothing')
    }

    bench('fold with the audit and the trail (defaults)', fold(true), { iterations: FOLDS, time: 0, warmupIterations: WARMUP, warmupTime: 0, setup: prepare(true) })
    bench('fold without them (audit and artifactTrail off)', fold(false), { iterations: FOLDS, time: 0, warmupIterations: WARMUP, warmupTime: 0, setup: prepare(false) })
    // The region's messages read ahead, as the engine's read-ahead leaves them for a fold.
    const readAhead = new ArtifactExtractor()
    bench('at fold time: merge the read-ahead + buildArtifactTrail + auditFold', () => {
      const extraction = readAhead.extract(region)
      const trail = buildArtifactTrail(extraction)
      const audit = auditFold({ folded: extraction.artifacts, checkpointText: `${SUMMARY}\n\n${trail.text}`, visibleAfter: tail.map(({ message }) => message), requiredSections: REQUIRED })
      if (audit.classes.path.seen === 0) throw new Error('audit.bench: the region has no paths')
    }, {
      iterations: 50, time: 0, warmupIterations: 5, warmupTime: 0,
      setup: async () => {
        await prepare(true)()
        for (const { message } of [...region, ...tail]) readAhead.read(message)
      },
    })
    bench('the read-ahead: a new extractor reads every message of the session (no fold)', () => {
      const extractor = new ArtifactExtractor()
      for (const { message } of [...region, ...tail]) extractor.read(message)
    }, { iterations: 10, time: 0, warmupIterations: 2, warmupTime: 0, setup: prepare(true) })
  })
}
