import { Context } from '@cordisjs/core'
import { cacheTotals } from '@warmfold/cache-ledger'
import type { PlannedPrune, PrunerSeam, SummaryRequestInput, SurfaceRegion } from '@warmfold/compaction-basic'
import { BasicCompactionEngine } from '@warmfold/compaction-basic'
import type { ContentBlock, GenerateOptions, Message, ModelInfo, TokenUsage } from '@warmfold/llm'
import { textBlock, toolCallBlock } from '@warmfold/llm'
import { ScriptedAdapter } from '@warmfold/llm/testing'
import type { Session, SessionStore } from '@warmfold/session'
import { silentRewrites } from './cache-assertions.ts'
import type { CacheObservation, CacheTotals } from './cache-observation.ts'
import { totalsOf } from './cache-observation.ts'
import { tokensOf } from './cache-profile.ts'
import { mountWarmfoldHost } from './mount-warmfold-host.ts'
import type { PrefixCache } from './prefix-cache.ts'
import { PrefixCacheService } from './prefix-cache-service.ts'
import {
  ColdCompactionEngine,
  LegacyCompactionEngine,
  LongInstructionCompactionEngine,
  ToollessCompactionEngine,
  TranscriptCompactionEngine,
} from './reference-strategies.ts'
import { regionCoverage } from './region-coverage.ts'
import { VirtualClock } from './virtual-clock.ts'
import type { ResolvedWorkload, WorkloadOptions, WorkloadStrategy } from './workload-options.ts'
import { resolveWorkload } from './workload-options.ts'
import { fillerText } from './workload-text.ts'
import { codingStep } from './coding-workload.ts'
import { firstMessage, registerCodingTools } from './coding-tools.ts'
import { lossySummary } from './lossy-summary.ts'
import { minimumWorkloadSummaryTokens, workloadSummary } from './workload-summary.ts'
import { requestLatency, requestLatencyMs } from './request-latency.ts'

/** The provider and model the scripted conversation runs on. */
export const WORKLOAD_ROUTE = { provider: 'sim', model: 'coder' } as const

/** What one workload run produced. */
export interface WorkloadRun {
  readonly workload: ResolvedWorkload
  readonly cache: PrefixCache
  readonly session: Session
  readonly summaryCalls: readonly CacheObservation[]
  /** For each summary call, in order: its {@link regionCoverage} of the region as the conversation had it before the compaction's prune. */
  readonly summaryCoverage: readonly number[]
  readonly conversation: readonly CacheObservation[]
  /** All requests of the session, conversation and summary together. */
  readonly totals: CacheTotals
  readonly silentRewrites: number
  /** The turn ended normally after every scripted step. */
  readonly completed: boolean
  /** Every request the provider saw, in order (one per observation of the session). */
  readonly requests: readonly GenerateOptions[]
  /** Output tokens of the scripted answer to each request, in the same order (`tokensOf` of its text, tool names and arguments). */
  readonly outputTokens: readonly number[]
  /** For each request, in the same order: the session's length when it was sent (the seq the next event gets). */
  readonly sentAtSeq: readonly number[]
  /** The background fold's prewarm requests (`purpose: 'prewarm'`), when the engine sent any. */
  readonly prewarmCalls: readonly CacheObservation[]
  /**
   * Summary calls the cache ledger's guard warned about (`cache/guard` events in the session):
   * calls that were not a warm replay of the last conversation request (rules C2/C3).
   */
  readonly guardWarnings: number
}

const SYSTEM_PROMPT = `You are a careful coding agent working in a TypeScript monorepo. ${fillerText(7, 1800)}`

/** Extra knobs for callers that measure with a real cache or change the host. */
export interface RunWorkloadHooks {
  /** Called for every request after the simulator saw it; e.g. a probe that replays it to a real server. */
  onRequest?(request: GenerateOptions): void | Promise<void>
  /** Called once every plugin is mounted, before the agent starts (e.g. to add an `agent/request` hook). */
  configure?(ctx: Context): void
  /**
   * Keep the session log as the JSONL file `<directory>/<id>.jsonl` (the session file store). The
   * run fails with `SessionError('EXISTS')` when that file exists. Omitted, the session (id
   * `workload`) stays in memory.
   */
  sessionFile?: { readonly directory: string; readonly id: string }
  /**
   * Keep the session log, as `id`, in any session store: `store` is `SessionStore`'s (a
   * `SessionBackend` from an SQL store package, or `'file'` with `directory`). The run fails with
   * `SessionError('EXISTS')` when the store already has `id`, and closes the session (flushed and
   * released, awaited) before it returns. Exclusive with `sessionFile`, its JSONL shorthand.
   */
  sessionStore?: { readonly store: SessionStore.Config['store']; readonly directory?: string; readonly id: string }
  /** Mount the cache ledger (default true; `false` only to measure what the ledger costs). */
  ledger?: boolean
}

/**
 * Runs the scripted coding session through the real agent loop, token meter, pruner,
 * invariant checker and compaction engine; only the provider's content is scripted.
 */
export async function runWorkload(options: WorkloadOptions = {}, hooks: RunWorkloadHooks = {}): Promise<WorkloadRun> {
  const workload = resolveWorkload(options)
  if (hooks.sessionFile && hooks.sessionStore)
    throw new TypeError(
      'runWorkload: sessionFile and sessionStore are exclusive; sessionFile is the JSONL shorthand of sessionStore',
    )
  const kept =
    hooks.sessionStore ??
    (hooks.sessionFile
      ? { store: 'file' as const, directory: hooks.sessionFile.directory, id: hooks.sessionFile.id }
      : undefined)
  const ctx = new Context()
  await ctx.start()
  try {
    ctx.plugin(PrefixCacheService, { profile: workload.profile })
    const cache = ctx.prefixCache.cache
    // What a request writes is readable from its first token on (the latency model's ttft +
    // prefill + cache read): a prewarm sent just before a conversation request does not help it.
    cache.entryDelayMs = (observation) =>
      requestLatency(
        { uncachedTokens: observation.uncachedTokens, cachedTokens: observation.cachedTokens, outputTokens: 0 },
        workload.latency,
      ).firstTokenMs
    const regions: RegionRecord = {}
    const clock = new VirtualClock(cache)
    const requests: GenerateOptions[] = []
    const outputTokens: number[] = []
    const sentAtSeq: number[] = []
    // The agent's session, once created (every request comes after).
    let live: Session | undefined
    // The simulator's charge of each request, and its position (for its output tokens).
    const charged = new WeakMap<GenerateOptions, { observation: CacheObservation; position: number }>()
    mountWarmfoldHost(ctx, {
      // The ledger runs on the simulator's virtual clock and TTL, so its expiry agrees with the
      // simulator's; the scripted model reports no usage (so the token meter keeps its own
      // estimates), and the ledger logs what the simulator charged as the provider's numbers.
      ledger:
        hooks.ledger === false
          ? false
          : {
              now: () => cache.now,
              cacheTtlMs: ledgerTtls(workload, cache.profile.ttlMs),
              estimateUsage: (options) => simulatedUsage(charged.get(options), outputTokens),
            },
      engine: recordingEngine(ENGINES[workload.strategy], regions),
      engineConfig: {
        ...workload.engine,
        // The engine keeps time on the simulator's virtual clock: idle timers, background folds
        // and the waits at the threshold are virtual seconds (see VirtualClock).
        clock,
        idle: { enabled: workload.idleCompaction },
        background: { enabled: workload.backgroundFold, prewarm: workload.prewarm },
        // Every dropped item is listed, so the bench can hold the audit against the simulator's record.
        artifactTrail: { enabled: workload.artifactTrail },
        audit: { maxDropped: 1_000_000 },
        ...(workload.summaryRoute
          ? { summarizationProvider: workload.summaryRoute.provider, summarizationModel: workload.summaryRoute.model }
          : {}),
      },
      pruner: workload.prunerBudget,
      ...(kept
        ? { sessions: { store: kept.store, ...(kept.directory === undefined ? {} : { directory: kept.directory }) } }
        : {}),
    })
    const coverage: number[] = []
    const adapter = scriptedModel(
      workload,
      (request, tokens) => {
        // By the request's own position: a background summary call answers while later requests are sent.
        const charge = charged.get(request)
        if (charge) outputTokens[charge.position] = tokens
      },
      (request) => charged.get(request)?.observation,
      cache.profile.ttlMs,
      clock,
      regions,
    )
    ctx.llm.registerAdapter(WORKLOAD_ROUTE.provider, adapter)
    if (workload.summaryRoute && workload.summaryRoute.provider !== WORKLOAD_ROUTE.provider)
      ctx.llm.registerAdapter(workload.summaryRoute.provider, adapter)
    ctx.on('llm/stream', async (request) => {
      requests.push(request)
      sentAtSeq.push(live?.length ?? 0)
      // The simulator's listener ran first (its plugin was mounted first): its last observation is this request's.
      charged.set(request, {
        observation: cache.observations.at(-1) as CacheObservation,
        position: requests.length - 1,
      })
      // 0 until the scripted model answers it: a request stopped before the provider (a failed probe) has no output.
      outputTokens.push(0)
      if (request.purpose === 'compaction') {
        if (!regions.latest)
          throw new Error(
            'runWorkload: a summary request reached the provider before the engine built one; its region is unknown',
          )
        coverage.push(regionCoverage(regions.latest, request))
      }
      await hooks.onRequest?.(request)
    })
    registerTools(ctx, workload, clock)
    hooks.configure?.(ctx)
    // Created here, not by the agent loop, which would resume a session file left by an earlier run.
    if (kept) await ctx.sessions.create(kept.id)
    const agent = await ctx.agentLoop.create(kept?.id ?? 'workload', {
      ...WORKLOAD_ROUTE,
      reasoningEffort: workload.effort,
      temperature: workload.temperature,
      stop: workload.stop,
      system: SYSTEM_PROMPT,
      maxSteps: workload.steps + 5,
    })
    live = agent.session
    for (let turn = 0; turn < workload.turns; turn++) {
      if (turn > 0) await clock.advanceIdle(workload.idleSeconds * 1000, agent)
      agent.followup(firstMessage(workload, turn))
      await agent.whenIdle()
    }
    const session = agent.session
    // A background fold still running when the work is done finishes (and is swapped in while idle).
    await clock.wait((ctx.compaction as BasicCompactionEngine).whenFoldsSettle(session), Number.POSITIVE_INFINITY)
    await agent.whenIdle()
    const ends = session.events.filter((event) => event.type === 'turn/end')
    const steps = session.events.filter(
      (event) => event.type === 'tool/result' && event.surface?.op === 'append',
    ).length
    const observations = cache.observations.filter((observation) => observation.sessionId === session.id)
    const summaryCalls = observations.filter((observation) => observation.purpose === 'compaction')
    if (summaryCalls.length !== coverage.length)
      throw new Error(
        `runWorkload: ${coverage.length} summary requests reached the provider but the cache observed ${summaryCalls.length}; coverage cannot be paired with its call`,
      )
    return {
      workload,
      cache,
      session,
      summaryCalls,
      summaryCoverage: coverage,
      conversation: observations.filter((observation) => observation.purpose === 'conversation'),
      totals: totalsOf(observations),
      silentRewrites: silentRewrites(observations).length,
      completed:
        ends.length === workload.turns &&
        ends.every((end) => (end.data as { reason?: string }).reason === 'stop') &&
        steps === workload.steps,
      requests,
      outputTokens,
      sentAtSeq,
      prewarmCalls: observations.filter((observation) => observation.purpose === 'prewarm'),
      guardWarnings: cacheTotals(session.events).guardWarnings,
    }
  } finally {
    // A database store releases asynchronously: its last flush must land before the context stops.
    if (kept) await ctx.sessions?.closeAll()
    await ctx.stop()
  }
}

/** The simulator profile's TTL for every provider of the workload (none when the profile never expires). */
function ledgerTtls(workload: ResolvedWorkload, ttlMs: number): Record<string, number> {
  if (!Number.isFinite(ttlMs)) return {}
  const providers = [WORKLOAD_ROUTE.provider, ...(workload.summaryRoute ? [workload.summaryRoute.provider] : [])]
  return Object.fromEntries(providers.map((provider) => [provider, ttlMs]))
}

/** What the simulator charged a request, as a provider would report it. */
function simulatedUsage(
  charge: { observation: CacheObservation; position: number } | undefined,
  outputTokens: readonly number[],
): TokenUsage | undefined {
  if (!charge) return undefined
  const { observation, position } = charge
  return {
    inputTokens: observation.uncachedTokens - observation.cacheWriteTokens,
    cacheReadTokens: observation.cachedTokens,
    cacheWriteTokens: observation.cacheWriteTokens,
    outputTokens: outputTokens[position],
  }
}

/** The engine class of each strategy. */
const ENGINES: Readonly<Record<WorkloadStrategy, typeof BasicCompactionEngine>> = {
  warmfold: BasicCompactionEngine,
  legacy: LegacyCompactionEngine,
  cold: ColdCompactionEngine,
  transcript: TranscriptCompactionEngine,
  toolless: ToollessCompactionEngine,
  'long-instruction': LongInstructionCompactionEngine,
}

/** The region of the summary request built last. */
interface RegionRecord {
  latest?: readonly Message[]
}

/**
 * `engine` unchanged, except that it records the region of each summary request it builds, as
 * the conversation had it before the compaction's prune landed: `legacy` prunes the region
 * itself, and its summarizer must be measured against what it no longer sees.
 */
function recordingEngine(engine: typeof BasicCompactionEngine, record: RegionRecord): typeof BasicCompactionEngine {
  return class RecordingEngine extends engine {
    private unpruned?: readonly Message[]

    protected override landPrunePlan(
      session: Session,
      pruner: PrunerSeam,
      plan: readonly PlannedPrune[],
      region: SurfaceRegion,
    ): void {
      this.unpruned = session.deriveMessages().slice(region.start, region.end + 1)
      super.landPrunePlan(session, pruner, plan, region)
    }

    protected override buildSummaryRequest(input: SummaryRequestInput): GenerateOptions {
      // The first call of a pressure pass summarizes the region the plan was landed for; a retry
      // with a smaller head (another length) summarizes nodes the prune left alone.
      record.latest = this.unpruned?.length === input.regionMessages.length ? this.unpruned : input.regionMessages
      this.unpruned = undefined
      return super.buildSummaryRequest(input)
    }
  }
}

function scriptedModel(
  workload: ResolvedWorkload,
  recordOutput: (request: GenerateOptions, tokens: number) => void,
  charged: (request: GenerateOptions) => CacheObservation | undefined,
  ttlMs: number,
  clock: VirtualClock,
  regions: RegionRecord,
): ScriptedAdapter {
  // The model carries the simulator profile's TTL, as an adapter carries its provider's.
  const cacheTtl = Number.isFinite(ttlMs) ? { cacheTtlMs: ttlMs } : {}
  // And the prices the run is billed at, as an adapter carries its provider's.
  const cachePrices = workload.cachePrices ? { cachePrices: workload.cachePrices } : {}
  const models: Record<string, ModelInfo> = {
    [WORKLOAD_ROUTE.model]: {
      contextWindow: workload.window,
      defaultMaxTokens: workload.defaultMaxTokens,
      reasoning: { efforts: ['low', 'high', 'max'], defaultEffort: 'high' },
      ...cacheTtl,
      ...cachePrices,
    },
  }
  if (workload.summaryRoute)
    models[workload.summaryRoute.model] ??= {
      contextWindow: workload.window,
      defaultMaxTokens: workload.defaultMaxTokens,
      reasoning: { efforts: ['low', 'high'], defaultEffort: 'low' },
    }
  let step = 0
  let turn = 0
  let turnEnd = workload.turnSteps[0] as number
  let folds = 0
  const answer = (request: GenerateOptions): ContentBlock[] => {
    if (request.purpose === 'compaction') {
      // A realistic checkpoint (1.5k-4k tokens), cut to the call's cap (never below one bullet a section).
      const fold = folds++
      const maxTokens =
        request.maxTokens === undefined ? undefined : Math.max(request.maxTokens, minimumWorkloadSummaryTokens(fold))
      if (workload.workload === 'coding')
        return [
          textBlock(
            lossySummary(fold, regions.latest ?? [], {
              readChars: workload.resultChars,
              turns: workload.turns,
              ...(maxTokens === undefined ? {} : { maxTokens }),
            }),
          ),
        ]
      return [textBlock(workloadSummary(fold, maxTokens === undefined ? {} : { maxTokens }))]
    }
    if (request.purpose !== 'conversation') return [textBlock('ok')]
    if (step >= turnEnd) {
      const last = turn === workload.turns - 1
      const text = last
        ? `All ${workload.steps} modules are read; the loader refactor plan is ready.`
        : `Modules 0 to ${step - 1} are read; ${workload.steps - step} to go.`
      if (!last) turnEnd += workload.turnSteps[++turn] as number
      return [textBlock(text)]
    }
    const index = step++
    if (workload.workload === 'coding') {
      const coding = codingStep(index, workload.resultChars)
      return [
        textBlock(fillerText(1000 + index, workload.proseChars)),
        toolCallBlock(`call-${index}`, coding.name, coding.arguments),
      ]
    }
    return [
      textBlock(fillerText(1000 + index, workload.proseChars)),
      toolCallBlock(`call-${index}`, 'read_file', `{"path":"src/module-${index}.ts"}`),
    ]
  }
  return new ScriptedAdapter({
    models,
    responses: async (request) => {
      const content = answer(request)
      const outputTokens = tokensOf(
        content.reduce(
          (chars, block) =>
            chars +
            (block.type === 'text'
              ? block.text.length
              : block.type === 'tool-call'
                ? block.name.length + block.arguments.length
                : 0),
          0,
        ),
      )
      recordOutput(request, outputTokens)
      // Every request takes its modelled time on the virtual clock (prefill what it missed, read
      // what it hit, decode its output). The conversation waits for its own requests; a summary
      // call or a prewarm sleeps beside it, and whoever waits for it moves the clock on.
      const charge = charged(request)
      const latencyMs = charge
        ? requestLatencyMs(
            { uncachedTokens: charge.uncachedTokens, cachedTokens: charge.cachedTokens, outputTokens },
            workload.latency,
          )
        : 0
      if (request.purpose === 'conversation') await clock.advance(latencyMs)
      else await clock.sleep(latencyMs)
      return { content }
    },
  })
}

/** The workload's tools; each call takes `stepSeconds` on the virtual clock (the tool step's own time). */
function registerTools(ctx: Context, workload: ResolvedWorkload, clock: VirtualClock): void {
  if (workload.workload === 'coding') return registerCodingTools(ctx, workload, clock)
  let calls = 0
  ctx.tools.register({
    name: 'read_file',
    description: 'Read a file of the repository.',
    parameters: {
      type: 'object',
      properties: { path: { type: 'string', description: 'Path from the repository root.' } },
      required: ['path'],
    },
    execute: async () => {
      const index = calls++
      await clock.advance(workload.stepSeconds * 1000)
      return fillerText(5000 + index, index % 3 === 2 ? workload.oversizedResultChars : workload.resultChars)
    },
  })
  for (const name of ['write_file', 'run_tests', 'search']) {
    ctx.tools.register({
      name,
      description: `The ${name.replace('_', ' ')} tool.`,
      parameters: { type: 'object', properties: { query: { type: 'string' } } },
      execute: () => 'ok',
    })
  }
}
