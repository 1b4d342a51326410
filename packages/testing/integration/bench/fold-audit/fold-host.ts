import { Context } from '@cordisjs/core'
import type { Agent } from '@warmfold/agent-loop'
import type { GenerateOptions } from '@warmfold/llm'
import { textBlock, toolCallBlock } from '@warmfold/llm'
import type { ScriptedReply } from '@warmfold/llm/testing'
import { ScriptedAdapter } from '@warmfold/llm/testing'
import type { Session } from '@warmfold/session'
import { FoldAuditor } from '@warmfold/compaction-basic/engine-parts'
import type { LoggedMessage } from '@warmfold/fold-audit'
import { mountWarmfoldHost } from '@warmfold/prefix-cache-testkit'
import type { CodingStep } from './coding-session.ts'

/** The route of every bench session: the scripted model, or the real adapter mounted under its name. */
export const ROUTE = { provider: 'scripted', model: 'coder' } as const
const SYSTEM = 'You are a careful coding agent.'
export const SUMMARY = [
  '## Goal and Intent',
  '- Fix the failing checkout and billing tests; keep the public API.',
  '## Key Decisions',
  '- Read each module before changing it.',
  '## Files and Code',
  '- src/m0/cart/index.ts, src/m3/billing/invoice.ts',
  '## Errors and Fixes',
  "- TS2322: Type 'string' is not assignable to type 'number'",
  '## Pending Work',
  '- Remaining modules.',
  '## Current Work',
  '- Reading handlers.',
  '## Next Step',
  '- Run `pnpm vitest run src/math`.',
  '## Critical Context',
  '- Tests run with pnpm test.',
].join('\n')
/** A summary in the middle of the 1,500–8,000 tokens a summary call decodes (4 characters a token). */
export const SUMMARY_TOKENS = 2000
export const TOKEN_CHARS = 4

/** SUMMARY, then bullets naming the session's modules, to SUMMARY_TOKENS tokens. */
export function longSummary(): string {
  const lines = [SUMMARY]
  for (let step = 0; lines.join('\n').length < SUMMARY_TOKENS * TOKEN_CHARS; step++) {
    lines.push(
      `- Read src/m${step}/handlers.ts: handle${step}x0 retries up to ${(step % 5) + 2} times; its budget check logs a warning past ${5000 + step}.`,
    )
  }
  return lines.join('\n').slice(0, SUMMARY_TOKENS * TOKEN_CHARS)
}

export const REQUIRED = [
  'Goal and Intent',
  'Key Decisions',
  'Files and Code',
  'Errors and Fixes',
  'Pending Work',
  'Current Work',
  'Next Step',
  'Critical Context',
]

/** The windows measured (`FOLD_AUDIT_BENCH_WINDOWS=32000,128000` to choose). */
export const WINDOWS = (process.env.FOLD_AUDIT_BENCH_WINDOWS ?? '32000,128000').split(',').map(Number)

/** The 60 steps of the bench session for `window`: every third reads a file sized so that the session fills about 80 % of the window (4 characters a token). */
export { codingSteps } from './coding-session.ts'
export const fileCharsFor = (window: number): number => Math.max(2000, Math.round((window * 4 * 0.8) / 20) - 1500)

/** What a bench host runs: the audit and the artifact trail (the defaults), the trail alone (`audit.enabled: false`), or neither. */
export type FoldSetup = 'audit and trail' | 'trail only' | 'neither'

/** Engine config: `auto: false` (only `compactNow` folds), the audit and the trail as `setup` says. */
const engineConfig = (setup: FoldSetup) => ({
  auto: false,
  ...(setup === 'audit and trail' ? {} : { audit: { enabled: false } }),
  ...(setup === 'neither' ? { artifactTrail: { enabled: false } } : {}),
})

/** A warmfold host (token meter, pruner, invariant checker, cache ledger, basic engine) without a model. */
export async function bareHost(setup: FoldSetup): Promise<Context> {
  const ctx = new Context()
  await ctx.start()
  mountWarmfoldHost(ctx, {
    pruner: { thresholdChars: 8192, headChars: 4096, tailChars: 1024 },
    engineConfig: engineConfig(setup),
  })
  return ctx
}

/** A host with a scripted model that walks `steps` (one tool call per request) and summarizes with {@link SUMMARY} when asked. */
export async function scriptedHost(window: number, steps: readonly CodingStep[], setup: FoldSetup): Promise<Context> {
  const ctx = await bareHost(setup)
  const reply = (request: GenerateOptions): ScriptedReply => {
    if (request.purpose === 'compaction') return { content: SUMMARY }
    const done = request.messages.filter((message) => message.role === 'assistant').length
    const step = steps[done]
    if (step === undefined) return { content: 'Done.' }
    return { content: [textBlock(`Step ${done}.`), toolCallBlock(`call-${done}`, step.name, step.arguments)] }
  }
  ctx.llm.registerAdapter(
    ROUTE.provider,
    new ScriptedAdapter({
      models: { [ROUTE.model]: { contextWindow: window, defaultMaxTokens: 8192 } },
      responses: reply,
    }),
  )
  for (const name of new Set(steps.map((step) => step.name))) {
    ctx.tools.register({
      name,
      description: `The ${name} tool.`,
      parameters: { type: 'object' },
      execute: (_args, context) => steps[Number(context.toolCallId.slice('call-'.length))]!.result,
    })
  }
  return ctx
}

/** Runs the scripted session once on a {@link scriptedHost} (`auto: false`: nothing folds while it runs). */
export async function runSource(ctx: Context, steps: readonly CodingStep[], id = 'source'): Promise<Session> {
  const agent = await ctx.agentLoop.create(id, { ...ROUTE, system: SYSTEM, maxSteps: steps.length + 5 })
  agent.followup(steps[0]?.userBefore ?? 'Fix the failing tests.')
  await agent.whenIdle()
  return agent.session
}

/**
 * `count` fresh copies of `from` as agents of `ctx`, ready to fold. The engine reads logged
 * messages in the next macrotask, and in a session turns pass between logging and folding:
 * the copies were logged just now, so the read-ahead is let run before they are returned.
 */
export async function copies(ctx: Context, from: Session, count: number): Promise<Agent[]> {
  const agents: Agent[] = []
  for (let index = 0; index < count; index++) {
    const id = `copy-${index}`
    const session = await ctx.sessions.create(id)
    const append = session.append as (type: string, data: unknown, ...intent: unknown[]) => unknown
    for (const event of from.events)
      append.call(session, event.type, event.data, ...(event.surface ? [event.surface] : []))
    agents.push(await ctx.agentLoop.create(id, { ...ROUTE, system: SYSTEM }))
  }
  await new Promise((done) => setImmediate(done))
  return agents
}

/** The surface messages of `session` with their seqs. */
export function surface(session: Session): LoggedMessage[] {
  return session.surface.nodes.map((seq) => ({
    seq,
    message: (session.eventAt(seq)!.data as { message: LoggedMessage['message'] }).message,
  }))
}

/** Rounds of folds each fold bench measures (each fold needs a fresh copy of the session): 60, or `FOLD_AUDIT_BENCH_ROUNDS` for a narrower interval. */
export const ROUNDS = rounds(process.env.FOLD_AUDIT_BENCH_ROUNDS)

function rounds(value: string | undefined): number {
  if (value === undefined) return 60
  const parsed = Number(value)
  if (!Number.isSafeInteger(parsed) || parsed < 2)
    throw new Error(`FOLD_AUDIT_BENCH_ROUNDS must be a whole number of at least 2, got ${JSON.stringify(value)}`)
  return parsed
}
/** Warm-up rounds before them (the JIT). */
export const WARMUP = 3
/** vitest calls a bench function a few times more than its iterations (it probes whether it is async): spare copies for those. */
export const SPARE = 4

/** The CPU time (user + system, ms) of this process while `work` runs. */
export async function cpuTimeOf(work: () => Promise<void>): Promise<number> {
  const before = process.cpuUsage()
  await work()
  const used = process.cpuUsage(before)
  return (used.user + used.system) / 1000
}

/** CPU time (ms) this process spent in `FoldAuditor.audit`, the engine's audit of a fold (`auditFold` and the payload of its `compaction/audit` event), since the bench began. */
let auditCpu = 0
// The engine's own class (this is the module the host's engine imports), wrapped once to time each call.
const audit = FoldAuditor.prototype.audit
FoldAuditor.prototype.audit = function timedAudit(this: FoldAuditor, ...args: Parameters<typeof audit>) {
  const before = process.cpuUsage()
  try {
    return audit.apply(this, args)
  } finally {
    const used = process.cpuUsage(before)
    auditCpu += (used.user + used.system) / 1000
  }
}

/** The median of `values` (the mean of the middle two for an even count). */
export function median(values: readonly number[]): number {
  const sorted = values.toSorted((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

/** Resamples the bootstrap interval takes. */
const RESAMPLES = 2000

/**
 * The 95 % bootstrap interval of the median of `values`: the 2.5th and 97.5th percentiles of
 * the medians of {@link RESAMPLES} resamples drawn with replacement (a fixed seed, so a run's
 * report is a function of its measurements).
 */
export function bootstrapInterval(values: readonly number[]): [number, number] {
  if (values.length === 0) return [Number.NaN, Number.NaN]
  let seed = 0x9e3779b9
  const next = (): number => {
    seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0
    return seed / 2 ** 32
  }
  const medians: number[] = []
  for (let resample = 0; resample < RESAMPLES; resample++)
    medians.push(median(Array.from(values, () => values[Math.floor(next() * values.length)]!)))
  medians.sort((x, y) => x - y)
  return [medians[Math.floor(RESAMPLES * 0.025)]!, medians[Math.ceil(RESAMPLES * 0.975) - 1]!]
}

/**
 * CPU measurements of the same work on hosts of different {@link FoldSetup}s, one run of each
 * per round, in an order that rotates from round to round, so that drift (JIT, GC, a busy
 * machine) falls on every setup alike. A bench calls {@link round} once per iteration.
 */
export class CpuRounds<S extends FoldSetup> {
  private readonly times = new Map<S, number[]>()
  /** The CPU time of the audit's own call inside each measured run, by setup (0 where the audit is off). */
  private readonly auditTimes = new Map<S, number[]>()
  private rounds = 0

  constructor(
    /** Rounds recorded at most (vitest calls a bench function a few times more than its iterations). */
    private readonly limit: number,
    readonly setups: readonly S[],
  ) {
    for (const setup of setups) {
      this.times.set(setup, [])
      this.auditTimes.set(setup, [])
    }
  }

  /** Runs the work of every setup once; `record` false for warm-up rounds (and rounds past the limit are not recorded either). */
  async round(record: boolean, work: Readonly<Record<S, () => Promise<void>>>): Promise<void> {
    const shift = this.rounds++ % this.setups.length
    const order = [...this.setups.slice(shift), ...this.setups.slice(0, shift)]
    const measured = new Map<S, [number, number]>()
    for (const setup of order) {
      const auditBefore = auditCpu
      const time = await cpuTimeOf(work[setup])
      measured.set(setup, [time, auditCpu - auditBefore])
    }
    if (!record || this.times.get(this.setups[0]!)!.length >= this.limit) return
    for (const [setup, [time, auditTime]] of measured) {
      this.times.get(setup)!.push(time)
      this.auditTimes.get(setup)!.push(auditTime)
    }
  }

  /**
   * For each setup whose work ran the audit: the median CPU time of the audit's own call inside
   * each run, and its share of that run's CPU time with the share's 95 % bootstrap interval. It
   * leaves out what the audit costs around the call (logging its event, the garbage it leaves),
   * which the differences of {@link report} include; it varies far less than they do.
   */
  auditReport(label: string, what: string): string[] {
    return this.setups.flatMap((setup) => {
      const audits = this.auditTimes.get(setup)!
      if (!audits.some((time) => time > 0)) {
        if (setup === 'audit and trail' && audits.length > 0)
          throw new Error(
            `${label}: no audit was timed on the host with the audit on; the engine's FoldAuditor is not the class this bench wrapped`,
          )
        return []
      }
      const times = this.times.get(setup)!
      const shares = audits.map((time, index) => (time / times[index]!) * 100)
      const [low, high] = bootstrapInterval(shares)
      return [
        `${label}: the audit's own call inside each ${what} with ${setup}, median of ${audits.length} rounds: ${median(audits).toFixed(2)} ms, ${median(shares).toFixed(1)} % of the ${what}'s CPU (95 % interval ${low.toFixed(1)} to ${high.toFixed(1)} %)`,
      ]
    })
  }

  /**
   * One line per comparison: the median of each side, the median of the round-by-round
   * differences (also as a share of the base's median) and its 95 % bootstrap interval, which
   * says how far another run's figure may fall from this one.
   */
  report(label: string, what: string, comparisons: readonly (readonly [S, S])[]): string[] {
    return comparisons.map(([side, base]) => {
      const a = this.times.get(side)!
      const b = this.times.get(base)!
      const differences = a.map((value, index) => value - b[index]!)
      const difference = median(differences)
      const [low, high] = bootstrapInterval(differences)
      const share = (value: number): string => `${((value / median(b)) * 100).toFixed(1)} %`
      return `${label}: CPU per ${what}, median of ${a.length} rounds: ${median(a).toFixed(1)} ms with ${side}, ${median(b).toFixed(1)} ms with ${base}; difference ${difference.toFixed(1)} ms (${share(difference)}; 95 % interval ${low.toFixed(1)} to ${high.toFixed(1)} ms, ${share(low)} to ${share(high)})`
    })
  }
}

/** What the fold benches compare: everything against neither (what the audit and the trail cost together), and against the trail alone (what the audit costs). */
export const FOLD_COMPARISONS = [
  ['audit and trail', 'neither'],
  ['audit and trail', 'trail only'],
] as const satisfies readonly (readonly [FoldSetup, FoldSetup])[]

/** Macrotasks a fold is given, after `compactNow` resolves, for the work it leaves behind. */
export const SETTLE_TURNS = 3

/**
 * Folds the next copy of `pool` (a host and its copies) with `compactNow`, then lets
 * {@link SETTLE_TURNS} macrotasks run: what a fold leaves for them (the engine reads the new
 * checkpoint's artifacts in the next one, for the audit of the fold that will replace it) is
 * part of its cost, and measured without them it would fall on whichever fold comes next, in
 * a round another host's as often as not. Throws when the pool is empty or nothing was folded.
 */
export function foldNext(
  pool: { readonly ctx: Context; readonly agents: Agent[] } | undefined,
  bench: string,
): () => Promise<void> {
  return async () => {
    const agent = pool?.agents.pop()
    if (pool === undefined || agent === undefined)
      throw new Error(`${bench}: the session pool is empty; raise its size to the rounds + warm-up`)
    const result = await pool.ctx.compaction.compactNow(agent)
    if (result === null) throw new Error(`${bench}: the fold folded nothing`)
    for (let turn = 0; turn < SETTLE_TURNS; turn++) await new Promise((done) => setImmediate(done))
  }
}
