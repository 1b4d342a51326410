import { Context } from '@cordisjs/core'
import { assertPluginsLoaded, PluginLoadError } from '@warmfold/llm'
import type { LiveSnapshot } from '@warmfold/proxy'
import { WarmfoldProxy } from '@warmfold/proxy'
import { checkOutPath } from '../shared/check-out-path.ts'
import type { CommandIo } from '../shared/command-io.ts'
import { RunError } from '../shared/run-error.ts'
import { backendFactory, describeStore, redactUrl } from '../shared/session-store-spec.ts'
import { UsageError } from '../shared/usage-error.ts'
import { SessionProxyStore } from './session-proxy-store.ts'
import type { ProxyArgs, ProxyStoreSpec } from './parse-proxy-args.ts'

/** What stops a running proxy: by default SIGINT or SIGTERM. */
export type ProxyStop = (stop: () => void) => void

/** Stops on Ctrl-C or SIGTERM (each listener removed once the proxy stopped). */
export const stopOnSignal: ProxyStop = (stop) => {
  const handler = () => {
    process.off('SIGINT', handler)
    process.off('SIGTERM', handler)
    stop()
  }
  process.on('SIGINT', handler)
  process.on('SIGTERM', handler)
}

/**
 * Runs `warmfold proxy` until `until` calls its stop: mounts `WarmfoldProxy` (its observer and
 * warm planner) in a cordis Context, prints where it listens and how to point an agent at it,
 * then, on stop, closes the server, flushes the log and prints what it saw.
 * @throws UsageError when `--log` cannot be written; RunError when the proxy cannot listen (the
 *   port is taken, the address is not this machine's).
 */
export async function runProxy(args: ProxyArgs, io: CommandIo, until: ProxyStop = stopOnSignal): Promise<number> {
  if (args.log !== undefined)
    await checkOutPath(args.log, { flag: '--log', command: 'warmfold proxy', document: 'the proxy log' })
  const store = args.store === undefined ? undefined : await openStore(args.store, io)
  const ctx = new Context()
  // Until it listens, a failure is reported once, by the RunError below; from then on, on stderr.
  let listening = false
  const warn = (what: string, error: unknown) =>
    listening && io.stderr(`warmfold proxy: ${what}: ${error instanceof Error ? error.message : String(error)}`)
  ctx.on('internal/error', (error) => warn('internal error', error))
  ctx.on('proxy/part-error', (part, error) => warn(`the ${part} failed (the request was forwarded)`, error))
  // What became of a warm rewrite when it did not go as planned: rare, and worth a line each.
  ctx.on('proxy/fail-open', (request, reason) =>
    warn(`request ${request.id}: the warm rewrite failed open, the agent's own request was sent`, reason),
  )
  ctx.on('proxy/hold-released', (request, reason) =>
    warn(
      `request ${request.id}: the warm rewrite's answer went on as it came (a tool call would reach the agent)`,
      reason,
    ),
  )
  await ctx.start()
  const { upstream, port, host, token, warmSummaries, log, noBodies, price: prices } = args
  // What is unset stays undefined, which the plugin's config takes as not given.
  ctx.plugin(WarmfoldProxy, { upstream, port, host, token, warmSummaries, log, store, noBodies, prices })
  try {
    await assertPluginsLoaded(ctx)
  } catch (error) {
    await ctx.stop()
    await store?.close().catch(() => {})
    const why = PluginLoadError.isInstance(error) ? (error.failures[0]?.message ?? error.message) : String(error)
    throw new RunError(`the proxy could not start on ${args.host}:${args.port}: ${why}`, { cause: error })
  }
  const address = ctx.proxy.address
  if (!address) {
    await ctx.stop()
    await store?.close().catch(() => {})
    throw new RunError(`the proxy could not start on ${args.host}:${args.port}`)
  }
  listening = true
  const where =
    store === undefined || args.store === undefined ? '' : `${describeStore(args.store)} session ${store.replica}`
  const base = args.token === undefined ? address.url : `${address.url}/_t/${'<token>'}`
  io.stdout(
    [
      `warmfold proxy: listening on ${address.url} → ${args.upstream}`,
      `  warm summaries: ${args.warmSummaries}${args.log === undefined ? '' : `; log: ${args.log}`}` +
        `${where === '' ? '' : `; store: ${where}`}` +
        `${args.price === undefined ? '' : `; prices: ${args.price.name}`}`,
      `  live page: ${base}/_warmfold/`,
      `  point the agent at it, e.g. ANTHROPIC_BASE_URL=${base}  OPENAI_BASE_URL=${base}/v1  ` +
        `GOOGLE_GEMINI_BASE_URL=${base}`,
      '',
    ].join('\n'),
  )
  const proxy = ctx.proxy
  await new Promise<void>((resolve) => until(resolve))
  await ctx.stop()
  // cordis 3.18 fires a service's stop without awaiting it: close() is the same close, awaited,
  // so the log is whole on disk and every exchange analysed before the command returns.
  await proxy.close()
  const { totals, sessions } = proxy.snapshot() as LiveSnapshot
  const hit =
    totals.hitRate === null
      ? 'no usage reported'
      : `${(totals.hitRate * 100).toFixed(1)} % of input tokens read from the cache`
  io.stdout(
    `warmfold proxy: stopped after ${totals.requests} request(s) in ${sessions.length} session(s): ` +
      `${totals.breaks} cache break(s), ${totals.compactions} compaction(s), ${hit}\n` +
      (store === undefined || args.store === undefined
        ? ''
        : `  report: warmfold report --store ${describeStore(args.store)} ${store.replica}\n`),
  )
  return 0
}

/**
 * `--store`'s store: this replica's session in the SQL store, made now so a store that cannot be
 * reached stops the proxy before it listens.
 * @throws UsageError naming `--store` (without a password) and why it cannot be opened.
 */
async function openStore(spec: ProxyStoreSpec, io: CommandIo): Promise<SessionProxyStore> {
  const backend = (await backendFactory(spec))()
  try {
    return await SessionProxyStore.open(backend, {
      onError: (error) => io.stderr(`warmfold proxy: ${redactUrl(error.message)}`),
    })
  } catch (error) {
    await (backend as { close?(): Promise<void> }).close?.().catch(() => {})
    throw new UsageError(`--store ${describeStore(spec)} cannot be opened: ${redactUrl((error as Error).message)}`, {
      cause: error,
    })
  }
}
