import type { Context } from '@cordisjs/core'
import { Service } from '@cordisjs/core'
import type { ConfigParser, Parsed, WarmfoldPluginInfo } from '@warmfold/llm'
import { integerSchema, millisecondsSchema, strictConfig, WARMFOLD_PLUGIN } from '@warmfold/llm'
import Schema from 'schemastery'
import { REQUEST_APIS } from '@warmfold/cache-ledger/prefix'
import { ProxyObserver } from './observe/proxy-observer.ts'
import type { ProxyStore } from './observe/proxy-store.ts'
import type { ProxyPrice } from './observe/observer-options.ts'
import { WarmSummaryPlanner } from './warm/warm-summary-planner.ts'
import type { ProxyAddress, ProxyServer } from './forward/proxy-server.ts'
import { startProxyServer } from './forward/proxy-server.ts'
import type { ExchangeObserver, InboundRequest, WarmMode, WarmPlanner } from './proxy-exchange.ts'

declare module '@cordisjs/core' {
  interface Context {
    proxy: WarmfoldProxy
  }
  interface Events {
    /** An observer or planner threw; the request was forwarded anyway. */
    'proxy/part-error'(part: 'observer' | 'planner', error: unknown): void
    /** A rewritten request failed (error status, tool call, cut); the original is being sent, once. */
    'proxy/fail-open'(request: InboundRequest, reason: string): void
    /**
     * A rewritten request's answer showed no text within `maxHoldMs` or `maxHoldBytes`: what was held
     * went to the agent and the rest streams on as it comes (no fail-open for that answer).
     */
    'proxy/hold-released'(request: InboundRequest, reason: string): void
  }
}

/**
 * The `ctx.proxy` service: `warmfold proxy`'s HTTP server. Starts listening when the plugin
 * starts (`address` is set from then on) and closes when it is disposed. Every request is
 * forwarded byte for byte to `upstream`; the observer sees each exchange after its answer ended;
 * the planner (when `warmSummaries` is not `off`) may rewrite a summary request, fail-open.
 */
export class WarmfoldProxy extends Service<WarmfoldProxy.Config> {
  static readonly [WARMFOLD_PLUGIN]: WarmfoldPluginInfo = {
    packageName: '@warmfold/proxy',
    provides: 'ctx.proxy',
  }
  static [Service.provide] = 'proxy'
  static [Service.immediate]: boolean = true

  private server: ProxyServer | undefined
  private observer: ExchangeObserver
  private planner: WarmPlanner
  private closing: Promise<void> | undefined

  constructor(ctx: Context, config: Parsed<WarmfoldProxy.Config>) {
    super(ctx, config)
    const ttlMs = Object.fromEntries(REQUEST_APIS.map((api) => [api, config.cacheTtlMs]))
    // With a price, the planner rewrites only where the replay is cheaper at its cache-read price.
    const plannerOptions = { ttlMs, cacheRead: config.prices?.cacheRead }
    this.observer =
      config.observer ??
      new ProxyObserver({
        log: config.log,
        store: config.store,
        noBodies: config.noBodies,
        cacheTtlMs: config.cacheTtlMs,
        maxSessions: config.maxSessions,
        prices: config.prices,
        // Its own planner: one that only recognises summary requests when the forward plans none.
        recognize: new WarmSummaryPlanner(plannerOptions),
      })
    this.planner = config.planner ?? new WarmSummaryPlanner(plannerOptions)
  }

  /** Where the proxy listens; undefined before it started and after it closed. */
  get address(): ProxyAddress | undefined {
    return this.server?.address
  }

  /** The observer's live state (`/_warmfold/state.json`; the default observer's `LiveSnapshot`), also after stop. */
  snapshot(): unknown {
    return this.observer.snapshot()
  }

  /**
   * Replaces the observer (the `observe/` room's) for the requests that arrive from now on. The
   * proxy closes the observer it holds when it stops; the one replaced stays the caller's to close.
   */
  useObserver(observer: ExchangeObserver): void {
    this.observer = observer
  }

  /** Replaces the warm planner (the `warm/` room's) for the requests that arrive from now on. */
  usePlanner(planner: WarmPlanner): void {
    this.planner = planner
  }

  protected override async start(): Promise<void> {
    const config = this.config
    this.closing = undefined
    this.server = await startProxyServer({
      upstream: new URL(config.upstream),
      host: config.host,
      port: config.port,
      token: config.token,
      mode: config.warmSummaries,
      maxBodyBytes: config.maxBodyBytes,
      hold: { ms: config.maxHoldMs, bytes: config.maxHoldBytes },
      onHoldReleased: (request, reason) => this.ctx.emit('proxy/hold-released', request, reason),
      parts: () => ({ observer: this.observer, planner: this.planner }),
      onPartError: (part, error) => this.ctx.emit('proxy/part-error', part, error),
      onFailOpen: (request, reason) => this.ctx.emit('proxy/fail-open', request, reason),
    })
  }

  /**
   * Stops listening, then closes the observer (pending analysis finished, log flushed). The service
   * does this when it is disposed, but cordis does not await that: a host that needs the log on
   * disk (`ctx.stop()` then exit) awaits `close()`, which is that same close, once.
   */
  close(): Promise<void> {
    this.closing ??= (async () => {
      const server = this.server
      this.server = undefined
      await server?.close()
      await this.observer.close()
    })()
    return this.closing
  }

  protected override stop(): Promise<void> {
    return this.close()
  }
}

/** `url` as an error may show it: any `user:password@` replaced, so a message never quotes a credential. */
function withoutCredentials(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@]*@/i, '$1[credentials]@')
}

/** Whether `host` only listens to this machine. */
export function isLoopbackHost(host: string): boolean {
  return /^(127(\.\d{1,3}){3}|localhost|::1|\[::1\])$/i.test(host)
}

export namespace WarmfoldProxy {
  /** A price profile as `warmfold proxy --price` reads it (multipliers of an uncached input token). */
  export type Prices = ProxyPrice
  export interface Config {
    /** The provider's base URL (http or https, optional path prefix): each request's path is appended to its path. */
    upstream: string
    port: number
    host: string
    token?: string
    warmSummaries: WarmMode
    maxBodyBytes: number
    /** How long a rewrite's answer is held back for its first text before it goes on as it came. */
    maxHoldMs: number
    /** How many bytes of a rewrite's answer are held back for its first text before it goes on as it came. */
    maxHoldBytes: number
    log?: string
    /** A store shared by replicas, written instead of `log` (see `ProxyStore`). */
    store?: ProxyStore
    noBodies: boolean
    cacheTtlMs: number
    maxSessions: number
    prices?: Prices
    /** The observer (`observe/`); default: a `ProxyObserver` of log, noBodies, cacheTtlMs, maxSessions, prices. */
    observer?: ExchangeObserver
    /**
     * The warm planner (`warm/`); default: a `WarmSummaryPlanner` whose TTL is `cacheTtlMs` and whose
     * cache-read price is `prices.cacheRead`.
     */
    planner?: WarmPlanner
  }

  const schema = Schema.object({
    upstream: Schema.string().required().description("The provider's base URL, e.g. https://api.openai.com."),
    port: integerSchema(0, 65535).default(8787).description('TCP port; 0 = any free port.'),
    host: Schema.string().default('127.0.0.1').description('Address to bind; not loopback requires token.'),
    token: Schema.string().description(
      'Token every request must carry (header x-warmfold-proxy-token or /_t/<token>).',
    ),
    warmSummaries: Schema.union(['off', 'dry-run', 'on']).default('off').description('Warm summary rewrites.'),
    maxBodyBytes: integerSchema(1)
      .default(32 * 1024 * 1024)
      .description('Largest request body; over it, 413.'),
    maxHoldMs: millisecondsSchema(1)
      .default(60_000)
      .description("How long a rewrite's answer may be held for its first text."),
    maxHoldBytes: integerSchema(1)
      .default(1024 * 1024)
      .description("How many bytes of a rewrite's answer may be held for its first text."),
    log: Schema.string().description('Path of the exchange log (JSONL).'),
    store: Schema.any().description('A ProxyStore written instead of log (replicas share it).'),
    noBodies: Schema.boolean().default(false).description('Log digests and usage only, no bodies.'),
    cacheTtlMs: millisecondsSchema(1).default(300_000).description('Prompt cache TTL the analysis assumes.'),
    maxSessions: integerSchema(1).default(1000).description('Sessions held in memory (LRU).'),
    // Checked by parsePrices when given (schemastery would fill an absent object in and refuse it).
    prices: Schema.any().description('Price profile (the CLI passes it).'),
    observer: Schema.any().description('The exchange observer (observe/).'),
    planner: Schema.any().description('The warm planner (warm/).'),
  })
  const parse = strictConfig('WarmfoldProxy', schema)
  const parsePrices = strictConfig(
    'WarmfoldProxy config prices',
    Schema.object({
      name: Schema.string().required(),
      cacheRead: Schema.number().min(0).max(1000).required(),
      cacheWrite: Schema.number().min(0).max(1000).required(),
      output: Schema.number().min(0).max(1000).required(),
      usdPerMillionInput: Schema.union([Schema.number().min(0).max(10_000), Schema.const(null)]).default(null),
    }),
  )

  /** Parses a config: the schema's checks, then the upstream URL and the token rule, each naming its key. */
  export const Config: ConfigParser<Config> = Object.assign(
    (input?: unknown): Config => {
      const config = parse(input) as Config
      const shown = JSON.stringify(withoutCredentials(config.upstream))
      if (config.prices !== undefined) config.prices = parsePrices(config.prices) as Prices
      let upstream: URL
      try {
        upstream = new URL(config.upstream)
      } catch {
        throw new TypeError(`WarmfoldProxy config: upstream must be an http(s) URL, got ${shown}`)
      }
      if (upstream.protocol !== 'http:' && upstream.protocol !== 'https:')
        throw new TypeError(
          `WarmfoldProxy config: upstream must be an http(s) URL, got ${shown} (protocol ${upstream.protocol})`,
        )
      if (upstream.search !== '' || upstream.hash !== '')
        throw new TypeError(`WarmfoldProxy config: upstream must have no query or fragment, got ${shown}`)
      if (upstream.username !== '' || upstream.password !== '')
        throw new TypeError(
          `WarmfoldProxy config: upstream must not carry credentials (the agent sends its own key), got ${shown}`,
        )
      if (config.log !== undefined && config.store !== undefined)
        throw new TypeError('WarmfoldProxy config: log and store are exclusive: the exchanges go to one of them')
      if (config.token === '') throw new TypeError('WarmfoldProxy config: token must not be empty')
      if (!isLoopbackHost(config.host) && config.token === undefined)
        throw new TypeError(
          `WarmfoldProxy config: host ${JSON.stringify(config.host)} is not loopback, so token is required ` +
            '(every agent must then send it); set token, or bind host 127.0.0.1',
        )
      return config
    },
    { schema: parse.schema },
  ) as ConfigParser<Config>
}

export default WarmfoldProxy
