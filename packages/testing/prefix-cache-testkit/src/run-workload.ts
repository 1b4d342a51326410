import { Context } from '@cordisjs/core'
import { cacheTotals } from '@warmfold/cache-ledger'
import { BasicCompactionEngine } from '@warmfold/compaction-basic'
import type { GenerateOptions, TokenUsage } from '@warmfold/llm'
import type { Session, SessionStore } from '@warmfold/session'
import { silentRewrites } from './cache-assertions.ts'
import type { CacheObservation, CacheTotals } from './cache-observation.ts'
import { totalsOf } from './cache-observation.ts'
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
import { requestLatency } from './request-latency.ts'
import type { RegionRecord } from './recording-engine.ts'
import { recordingEngine } from './recording-engine.ts'
import { WORKLOAD_ROUTE, workloadModel } from './workload-model.ts'
import { firstMessage, registerWorkloadTools } from './workload-tools.ts'

/** What one workload run produced. */
export interface WorkloadRun {
  readonly workload: ResolvedWorkload
  readonly cache: PrefixCache
  readonly session: Session
  readonly summaryCalls: readonly CacheObservation[]
  /**
   * For each summary call, in order: its {@link regionCoverage} of the region as the
   * conversation had it before the compaction's prune.
   */
  readonly summaryCoverage: readonly number[]
  readonly conversation: readonly CacheObservation[]
  /** All requests of the session, conversation and summary together. */
  readonly totals: CacheTotals
  readonly silentRewrites: number
  /** The turn ended normally after every scripted step. */
  readonly completed: boolean
  /** Every request the provider saw, in order (one per observation of the session). */
  readonly requests: readonly GenerateOptions[]
  /**
   * Output tokens of the scripted answer to each request, in the same order
   * (`tokensOf` of its text, tool names and arguments).
   */
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
  const kept = hooks.sessionStore ?? (hooks.sessionFile ? { store: 'file' as const, ...hooks.sessionFile } : undefined)
  const ctx = new Context()
  await ctx.start()
  try {
    ctx.plugin(PrefixCacheService, { profile: workload.profile })
    const cache = ctx.prefixCache.cache
    // What a request writes is readable from its first token on (the latency model's ttft +
    // prefill + cache read): a prewarm sent just before a conversation request does not help it.
    cache.entryDelayMs = (observation) =>
      requestLatency({ ...observation, outputTokens: 0 }, workload.latency).firstTokenMs
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
    const adapter = workloadModel(
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
    registerWorkloadTools(ctx, workload, clock)
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
      if (turn > 0) await clock.advance(workload.idleSeconds * 1000, agent)
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
        `runWorkload: ${coverage.length} summary requests reached the provider but the cache observed ` +
          `${summaryCalls.length}; coverage cannot be paired with its call`,
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
