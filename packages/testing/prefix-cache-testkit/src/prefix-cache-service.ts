import type { Context } from '@cordisjs/core'
import { Service } from '@cordisjs/core'
import type { ConfigParser, Parsed, WarmfoldPluginInfo } from '@warmfold/llm'
import { strictConfig, WARMFOLD_PLUGIN } from '@warmfold/llm'
import type { AnySessionEvent, Session } from '@warmfold/session'
import Schema from 'schemastery'
import type { CacheObservation, CacheTotals } from './cache-observation.ts'
import { PROFILE_SYNTAX, parseCacheProfile } from './cache-profile.ts'
import { PrefixCache } from './prefix-cache.ts'

declare module '@cordisjs/core' {
  interface Context {
    prefixCache: PrefixCacheService
  }
}

/**
 * `ctx.prefixCache`: a {@link PrefixCache} that observes every request through the `llm/stream`
 * hook (exactly what adapters receive) and notes durable rewrites from `session/event`.
 */
export class PrefixCacheService extends Service<PrefixCacheService.Config> {
  static readonly [WARMFOLD_PLUGIN]: WarmfoldPluginInfo = {
    packageName: '@warmfold/prefix-cache-testkit',
    provides: 'ctx.prefixCache',
  }
  static [Service.provide] = 'prefixCache'
  static [Service.immediate]: boolean = true

  /** The simulator. */
  readonly cache: PrefixCache

  constructor(ctx: Context, config: Parsed<PrefixCacheService.Config>) {
    super(ctx, config)
    this.cache = new PrefixCache(parseCacheProfile(config.profile))
    ctx.on('llm/stream', (options) => void this.cache.observe(options))
    ctx.on('session/event', (session: Session, event: AnySessionEvent) => {
      if (event.type === 'compaction/summary' || event.type === 'compaction/prune')
        this.cache.noteRewrite(session.id, { type: event.type, seq: event.seq })
      else if (event.type === 'request/header' && event.data.reason !== 'initial')
        this.cache.noteRewrite(session.id, { type: 'request/header', seq: event.seq })
    })
  }

  /** Every observation so far. */
  get observations(): readonly CacheObservation[] {
    return this.cache.observations
  }

  /** Totals over all observations, or those `filter` keeps. */
  totals(filter?: (observation: CacheObservation) => boolean): CacheTotals {
    return this.cache.totals(filter)
  }
}

export namespace PrefixCacheService {
  export interface Config {
    /** `bytes` (default), `blocks:N[:MIN]` or `anthropic`. */
    profile: string
  }
  export const Config: ConfigParser<Config> = strictConfig(
    'PrefixCacheService',
    Schema.object({
      profile: Schema.string().default('bytes').description(`Cache profile: ${PROFILE_SYNTAX}.`),
    }),
  ) as ConfigParser<Config>
}
