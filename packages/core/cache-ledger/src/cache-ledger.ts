import type { Context } from '@cordisjs/core'
import { Service } from '@cordisjs/core'
import type { ConfigParser, GenerateOptions, LlmFinish, Parsed, TokenUsage, WarmfoldPluginInfo } from '@warmfold/llm'
import { integerSchema, millisecondsSchema, strictConfig, WARMFOLD_PLUGIN } from '@warmfold/llm'
import type { Session, SessionEventMap } from '@warmfold/session'
import Schema from 'schemastery'
import type { CacheGuardData } from './cache-events.ts'
import { CacheGuardError } from './cache-guard-error.ts'
import type { CacheTotals } from './cache-totals.ts'
import { cacheTotals } from './cache-totals.ts'
import { DEFAULT_CACHE_TTL_MS, DEFAULT_PROVIDER_TOLERANCE_TOKENS } from './prefix/index.ts'
import type { SentRequest } from './request-observer.ts'
import { RequestObserver } from './request-observer.ts'
import { UnloggedSessions } from './unlogged-sessions.ts'

declare module '@cordisjs/core' {
  interface Context {
    cacheLedger: CacheLedger
  }
}

/**
 * The `ctx.cacheLedger` service: observes every request sent through `ctx.llm` and logs one
 * `cache/observation` per request to its session (what the provider reported, what the prefix
 * made possible, the first divergence and its cause), and guards summary calls: one that is not
 * a warm replay of the session's last conversation request is logged as `cache/guard` before it
 * is sent, and with `guard: 'refuse'` not sent at all.
 *
 * The ledger only appends log-only events; it never changes a request or a prompt byte.
 */
export class CacheLedger extends Service<CacheLedger.Config> {
  static readonly [WARMFOLD_PLUGIN]: WarmfoldPluginInfo = {
    packageName: '@warmfold/cache-ledger',
    provides: 'ctx.cacheLedger',
  }
  static [Service.provide] = 'cacheLedger'
  static [Service.immediate]: boolean = true
  static inject = ['llm', 'sessions']

  constructor(ctx: Context, config: Parsed<CacheLedger.Config>) {
    super(ctx, config)
    const now = config.now ?? Date.now
    const ttls: Record<string, number> = { ...DEFAULT_CACHE_TTL_MS, ...config.cacheTtlMs }
    const observer = new RequestObserver({
      toleranceTokens: config.providerToleranceTokens,
      forgetAfterMs: config.forgetAfterMs,
    })
    const sessions = new Map<string, Session>()
    const openSession = (sessionId: string): Session | undefined => {
      const session = sessions.get(sessionId)
      return session && !session.isClosed ? session : undefined
    }
    const sent = new WeakMap<GenerateOptions, SentRequest>()
    // Requests sent and not yet finished, per session id: a close logs the aborted ones (see `session/close`).
    const inFlight = new Map<string, Set<GenerateOptions>>()
    const unlogged = new UnloggedSessions()

    /** Logs a cache event to session `sessionId` (`about`: the request it is about, for a warning's words). */
    const log = (
      sessionId: string,
      about: GenerateOptions | undefined,
      ...[type, data]:
        | ['cache/observation', SessionEventMap['cache/observation']]
        | ['cache/guard', SessionEventMap['cache/guard']]
    ): void => {
      const session = openSession(sessionId)
      if (!session) {
        const warning = unlogged.warning(sessionId, type, about)
        if (warning) ctx.emit('internal/warning', warning)
        return
      }
      try {
        if (type === 'cache/guard') session.append(type, data)
        else session.append(type, data)
      } catch (error) {
        ctx.emit(
          'internal/warning',
          `CacheLedger: could not log ${type} to session ${sessionId}: ${(error as Error)?.message ?? String(error)}`,
        )
      }
    }

    /** Takes `options` off the requests in flight and returns what was recorded when it was sent. */
    const settle = (options: GenerateOptions): SentRequest | undefined => {
      const request = sent.get(options)
      sent.delete(options)
      const pending = options.sessionId === undefined ? undefined : inFlight.get(options.sessionId)
      pending?.delete(options)
      if (pending?.size === 0) inFlight.delete(options.sessionId as string)
      return request
    }

    // A model's TTL is read once: every request would otherwise pay a call into the runtime.
    const modelTtls = new Map<string, number>()
    const resolveTtl = async (provider: string, model: string, key: string): Promise<number> => {
      let fromModel: number | undefined
      try {
        fromModel = (await ctx.llm.resolveModelInfo(provider, model)).cacheTtlMs
      } catch {
        // The runtime resolved this model a moment ago to prepare the call; a failure now only loses
        // the model's own TTL.
      }
      const ttlMs = fromModel ?? ttls[provider] ?? Number.POSITIVE_INFINITY
      modelTtls.set(key, ttlMs)
      return ttlMs
    }

    const observe = (options: GenerateOptions, ttlMs: number): void => {
      const session = options.sessionId === undefined ? undefined : openSession(options.sessionId)
      let request: SentRequest
      try {
        request = observer.send(options, session, ttlMs, now())
      } catch (error) {
        // The ledger only watches: a request it cannot fingerprint (say, a NaN temperature) is not
        // observed, but still sent.
        ctx.emit(
          'internal/warning',
          `CacheLedger: could not observe a ${options.purpose ?? 'llm'} request to ` +
            `${options.provider}/${options.model}: ${(error as Error)?.message ?? String(error)}`,
        )
        return
      }
      if (request.guard && config.guard !== 'off' && options.sessionId !== undefined) {
        const guard: CacheGuardData = {
          action: config.guard,
          provider: options.provider,
          model: options.model,
          ...request.guard,
        }
        log(options.sessionId, options, 'cache/guard', guard)
        if (config.guard === 'refuse') throw new CacheGuardError(options.sessionId, guard.reason, guard.divergence)
      }
      sent.set(options, request)
      if (options.sessionId === undefined) return
      const pending = inFlight.get(options.sessionId) ?? new Set()
      inFlight.set(options.sessionId, pending.add(options))
    }

    // Sessions are learned as the store opens them (one listener call per session, not per
    // event). A session the store has closed is dropped when the next one opens, so the ledger
    // never keeps a closed session's log alive for long. (Not a WeakRef: V8 keeps a WeakRef's
    // target alive until the current macrotask ends, which a run without I/O never reaches.)
    ctx.on('session/open', (session: Session) => {
      for (const [id, held] of sessions) if (held.isClosed) sessions.delete(id)
      sessions.set(session.id, session)
      unlogged.opened(session.id)
      // A session with history (a restart, another process): what its next request should reuse
      // is in its log, so the first request after the restart is judged like any other.
      // Event times are trusted only on a ledger whose clock is theirs (Date.now).
      if (session.length > 0) observer.restore(session, config.now === undefined)
    })

    // Prepended, so a refusing guard stops the call before any other observer records it.
    ctx.on(
      'llm/stream',
      (options: GenerateOptions) => {
        const key = `${options.provider}\u0000${options.model}`
        const ttlMs = modelTtls.get(key)
        if (ttlMs === undefined)
          return resolveTtl(options.provider, options.model, key).then((resolved) => observe(options, resolved))
        observe(options, ttlMs)
      },
      { prepend: true },
    )

    /** Logs the observation of `options`, a request the ledger saw sent, which ended with `outcome`. */
    const finish = (options: GenerateOptions, outcome: LlmFinish): void => {
      const request = settle(options)
      if (!request) return
      // The provider's own usage always wins; an estimate only fills in for a provider that reports none.
      const usage = outcome.usage ?? config.estimateUsage?.(options)
      const observation = observer.finish(request, usage === outcome.usage ? outcome : { ...outcome, usage }, now())
      if (request.sessionId !== undefined) log(request.sessionId, options, 'cache/observation', observation)
    }
    // The log takes nothing once its close has begun. A call whose signal is aborted by then (a
    // background fold the engine discards on the close) is logged now, as aborted, without the
    // tokens its stream might still report; one still running is named when it ends.
    ctx.on('session/close', (session: Session) => {
      unlogged.closed(session.id)
      for (const options of inFlight.get(session.id) ?? []) {
        if (!options.signal?.aborted) {
          unlogged.closedInFlight(options)
          continue
        }
        finish(options, { finishReason: 'aborted' })
      }
      // Also drops a call stopped between the hook and the adapter, which never ends with `llm/finish`.
      inFlight.delete(session.id)
    })

    ctx.on('llm/finish', finish)
  }

  /**
   * Totals of the `cache/observation` and `cache/guard` events in `session`'s log: every request
   * counted, summary calls and retries included.
   */
  totals(session: Session): CacheTotals {
    return cacheTotals(session.events)
  }
}

export namespace CacheLedger {
  export interface Config {
    /**
     * What the summary guard does with a summary call that is not a warm replay of the last
     * conversation request: `warn` logs `cache/guard` and sends it, `refuse` logs it and refuses
     * the compaction, `off` checks nothing. Default `warn`.
     */
    guard: 'warn' | 'refuse' | 'off'
    /**
     * Cache TTL per provider id in milliseconds, for models whose `ModelInfo` has no
     * `cacheTtlMs`; merged over the defaults (`anthropic` and `openai` 5 min, `deepseek` 3 h).
     * Other providers never expire.
     */
    cacheTtlMs: Record<string, number>
    /**
     * Cached tokens may fall this many tokens (and 5 %) short of the expected prefix before the
     * cause is `provider`. Default 1024.
     */
    providerToleranceTokens: number
    /** Prompt parts and sessions not seen for this long are forgotten (keep it above the longest TTL). Default 24 h. */
    forgetAfterMs: number
    /** The clock, in milliseconds (default `Date.now`); a test or a simulator passes its own. */
    now?: () => number
    /**
     * Usage for a call whose provider reported none (a local server without usage, a simulator):
     * called when the call ends, with the options it was sent with. The provider's own usage
     * always wins. Default: none, and the observation's token fields stay absent.
     */
    estimateUsage?: (options: GenerateOptions) => TokenUsage | undefined
  }

  export const Config: ConfigParser<Config> = strictConfig(
    'CacheLedger',
    Schema.object({
      guard: Schema.union(['warn', 'refuse', 'off'] as const)
        .default('warn')
        .description('What the summary guard does with a summary call that is not a warm replay.'),
      cacheTtlMs: Schema.dict(millisecondsSchema(1))
        .default({})
        .description('Cache TTL per provider id (ms), for models without ModelInfo.cacheTtlMs.'),
      providerToleranceTokens: integerSchema()
        .default(DEFAULT_PROVIDER_TOLERANCE_TOKENS)
        .description('How far cached tokens may fall short of the expected prefix before the provider is blamed.'),
      forgetAfterMs: millisecondsSchema(1)
        .default(24 * 60 * 60 * 1000)
        .description('Forget prompt parts and sessions not seen for this long (ms).'),
      now: Schema.function().description('The clock in milliseconds; default Date.now.'),
      estimateUsage: Schema.function().description(
        "Usage for a call whose provider reported none; the provider's own usage always wins.",
      ),
    }),
  ) as ConfigParser<Config>
}
