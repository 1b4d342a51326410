import { Context } from '@cordisjs/core'
import type { Agent } from '@warmfold/agent-loop'
import type { GenerateOptions } from '@warmfold/llm'
import { textBlock, toolCallBlock } from '@warmfold/llm'
import type { ScriptedReply } from '@warmfold/llm/testing'
import { ScriptedAdapter } from '@warmfold/llm/testing'
import type { Session } from '@warmfold/session'
import { afterAll, bench, describe } from 'vitest'
// The test kit will depend on the compaction engine, which will depend on this package, so a
// devDependency on either would make a workspace cycle: like the cache ledger's overhead bench,
// this one reaches the kit's source directly to mount a real warmfold host.
import { mountWarmfoldHost } from '../../../testing/prefix-cache-testkit/src/mount-warmfold-host.ts'
import type { LoggedMessage } from '../src/index.ts'
import { auditFold, buildArtifactTrail, extractArtifacts } from '../src/index.ts'
import type { CodingStep } from './coding-session.ts'
import { codingSteps } from './coding-session.ts'

// What the fold audit adds to a fold: the CPU time of a real fold (BasicCompactionEngine's
// compactNow on a 60-step coding session, with the token meter, the pruner, the invariant
// checker and the cache ledger; only the model's content is scripted) against extraction, audit
// and artifact trail of the same folded region. Compare the means of the two benches of a window.

const ROUTE = { provider: 'scripted', model: 'coder' } as const
const SUMMARY = [
  '## Goal and Intent', '- Fix the failing checkout and billing tests; keep the public API.',
  '## Key Decisions', '- Read each module before changing it.',
  '## Files and Code', '- src/m0/cart/index.ts, src/m3/billing/invoice.ts', '## Errors and Fixes', "- TS2322: Type 'string' is not assignable to type 'number'",
  '## Pending Work', '- Remaining modules.', '## Current Work', '- Reading handlers.', '## Next Step', '- Run `pnpm vitest run src/math`.',
  '## Critical Context', '- Tests run with pnpm test.',
].join('\n')
const REQUIRED = ['Goal and Intent', 'Key Decisions', 'Files and Code', 'Errors and Fixes', 'Pending Work', 'Current Work', 'Next Step', 'Critical Context']

/** A host with a scripted model that walks `steps` (one tool call per request), then summarizes when asked. */
async function host(window: number, steps: readonly CodingStep[]): Promise<Context> {
  const ctx = new Context()
  await ctx.start()
  mountWarmfoldHost(ctx, { pruner: { thresholdChars: 8192, headChars: 4096, tailChars: 1024 } })
  const reply = (request: GenerateOptions): ScriptedReply => {
    if (request.purpose === 'compaction') return { content: SUMMARY }
    const done = request.messages.filter((message) => message.role === 'assistant').length
    const step = steps[done]
    if (step === undefined) return { content: 'Done.' }
    return { content: [textBlock(`Step ${done}.`), toolCallBlock(`call-${done}`, step.name, step.arguments)] }
  }
  // A window large enough that the session reaches its full size before the measured fold.
  ctx.llm.registerAdapter(ROUTE.provider, new ScriptedAdapter({ models: { [ROUTE.model]: { contextWindow: window * 4, defaultMaxTokens: 8192 } }, responses: reply }))
  for (const name of new Set(steps.map((step) => step.name))) {
    ctx.tools.register({
      name,
      description: `The ${name} tool.`,
      parameters: { type: 'object' },
      execute: (_args, context) => {
        const step = steps[Number(context.toolCallId.slice('call-'.length))]!
        if (step.isError) throw new Error(step.result)
        return step.result
      },
    })
  }
  return ctx
}

/** Runs the scripted session once, then copies its log into fresh sessions, one per fold to measure. */
async function sessions(ctx: Context, steps: readonly CodingStep[], copies: number): Promise<Agent[]> {
  const source = await ctx.agentLoop.create('source', { ...ROUTE, system: 'You are a careful coding agent.', maxSteps: steps.length + 5 })
  for (const [index, step] of steps.entries()) {
    if (index === 0 || step.userBefore !== undefined) {
      source.followup(step.userBefore ?? 'Go on.')
      await source.whenIdle()
    }
  }
  const agents: Agent[] = []
  for (let copy = 0; copy < copies; copy++) {
    const session = await ctx.sessions.create(`copy-${agents.length}-${copy}`)
    for (const event of source.session.events) {
      const append = session.append as (type: string, data: unknown, ...intent: unknown[]) => unknown
      append.call(session, event.type, event.data, ...(event.surface ? [event.surface] : []))
    }
    agents.push(await ctx.agentLoop.create(session.id, { ...ROUTE, system: 'You are a careful coding agent.' }))
  }
  return agents
}

/** The surface messages of `session` with their seqs: what a fold of positions 0..end replaces, and what stays. */
function surface(session: Session): LoggedMessage[] {
  return session.surface.nodes.map((seq) => ({ seq, message: (session.eventAt(seq)!.data as { message: LoggedMessage['message'] }).message }))
}

const contexts: Context[] = []
afterAll(async () => {
  for (const ctx of contexts.splice(0)) await ctx.stop()
})

for (const window of [128_000, 512_000]) {
  // 60 steps; every third one reads a source file sized so that the session fills about 80 %
  // of the window (4 characters a token): 128k → about 400,000 characters of history.
  const steps = codingSteps(60, Math.round((window * 4 * 0.8) / 20) - 1500)
  describe(`a 60-step coding session, ${window / 1000}k window`, () => {
    const pool: Agent[] = []
    let region: LoggedMessage[] = []
    let tail: LoggedMessage[] = []
    let ctx: Context | undefined
    const prepare = async (): Promise<void> => {
      if (ctx === undefined) {
        ctx = await host(window, steps)
        contexts.push(ctx)
      }
      if (pool.length < 12) pool.push(...(await sessions(ctx, steps, 12 - pool.length)))
      if (region.length === 0) {
        // The region a fold replaces: all but the last few messages (the retained tail).
        const messages = surface(pool[0]!.session)
        region = messages.slice(0, -4)
        tail = messages.slice(-4)
      }
    }

    bench('fold: BasicCompactionEngine.compactNow', async () => {
      const agent = pool.pop()
      if (agent === undefined) throw new Error('audit.bench: the session pool is empty; raise its size to the iterations + warmup')
      const result = await ctx!.compaction.compactNow(agent)
      if (result === null) throw new Error('audit.bench: the fold folded nothing')
    }, { iterations: 8, time: 0, warmupIterations: 2, warmupTime: 0, setup: prepare })

    bench('audit: extractArtifacts + buildArtifactTrail + auditFold', () => {
      const extraction = extractArtifacts(region)
      const trail = buildArtifactTrail(extraction)
      const audit = auditFold({ folded: extraction.artifacts, checkpointText: `${SUMMARY}\n\n${trail.text}`, visibleAfter: tail.map(({ message }) => message), requiredSections: REQUIRED })
      if (audit.classes.path.seen === 0) throw new Error('audit.bench: the region has no paths')
    }, { iterations: 20, time: 0, warmupIterations: 3, warmupTime: 0, setup: prepare })
  })
}
