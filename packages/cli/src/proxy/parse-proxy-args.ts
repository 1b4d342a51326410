import type { PriceProfile } from '@warmfold/prefix-cache-testkit'
import { PRICE_SYNTAX } from '@warmfold/prefix-cache-testkit'
import { isLoopbackHost } from '@warmfold/proxy'
import type { CommandFlags } from '../shared/command-flags.ts'
import { formatUsage, parseFlags } from '../shared/command-flags.ts'
import { boundedInteger, oneOf } from '../shared/flag-values.ts'
import { readPriceProfile } from '../shared/read-profile.ts'
import type { StoreSpec } from '../shared/session-store-spec.ts'
import { parseStoreSpec, redactUrl } from '../shared/session-store-spec.ts'
import { UsageError } from '../shared/usage-error.ts'

/** What `--warm-summaries` accepts. */
export const WARM_MODES = ['off', 'dry-run', 'on'] as const

/** The environment variable `--token` may come from (a flag's value shows in `ps`). */
export const TOKEN_ENV = 'WARMFOLD_PROXY_TOKEN'

/** The parsed `warmfold proxy` command line. */
export interface ProxyArgs {
  /** The provider's base URL every request is forwarded to (its path prefixes the request's). */
  readonly upstream: string
  readonly port: number
  readonly host: string
  /** Required off loopback: the agent sends it as `x-warmfold-proxy-token` or in the base URL (`/_t/TOKEN/…`). */
  readonly token?: string
  readonly warmSummaries: (typeof WARM_MODES)[number]
  readonly log?: string
  /** An SQL session store written instead of `--log`, shared by replicas (`sqlite:PATH`, `postgres:URL`). */
  readonly store?: ProxyStoreSpec
  readonly noBodies: boolean
  readonly price?: PriceProfile
  readonly help: boolean
}

/** What `warmfold proxy --store` accepts: an SQL store (a `file:` store has no place for replicas to meet). */
export type ProxyStoreSpec = Exclude<StoreSpec, { kind: 'file' }>

/** The fields of `ProxyArgs` a command line may leave unset. */
type OptionalArg = 'upstream' | 'token' | 'log' | 'store' | 'price'

/** What `warmfold proxy`'s flags set. */
type ProxyFlags = { [Key in OptionalArg]: ProxyArgs[Key] | undefined } & Omit<ProxyArgs, OptionalArg>

/** `warmfold proxy`'s flags: the table that parses them and prints `--help`. */
export const PROXY_FLAGS: CommandFlags<ProxyFlags> = {
  command: 'proxy',
  synopsis: `Usage: warmfold proxy --upstream URL [--port 8787] [--host 127.0.0.1] [--warm-summaries off|dry-run|on]
                      [--log FILE | --store SPEC] [--no-bodies] [--price PROFILE] [--token TOKEN]

Sits at an agent's base URL and forwards every request to --upstream byte for byte (Anthropic
Messages, OpenAI Chat Completions and Responses, Gemini generateContent). It explains every
prefix-cache break live at http://HOST:PORT/_warmfold/ and, with --warm-summaries on, sends the
agent's summary (compaction) request in the warm shape: the conversation's last request byte for
byte, then the agent's own instruction; if the provider refuses it or answers with a tool call,
the original request is sent once instead.`,
  footer: `Point the agent at http://HOST:PORT with the path its base URL needs
(e.g. OPENAI_BASE_URL=http://127.0.0.1:8787/v1).
Credentials go only to --upstream and are never logged. Off 127.0.0.1 a token is required
(--token or ${TOKEN_ENV}); the agent sends it as the x-warmfold-proxy-token header or in its base
URL: http://HOST:PORT/_t/TOKEN/v1. Stop with Ctrl-C: the log is flushed before the proxy exits.`,
  column: 24,
  positionals: false,
  flags: {
    upstream: {
      value: 'URL',
      needs: 'the provider base URL',
      parse: upstreamUrl,
      help: ['the provider every request goes to (required), e.g. https://api.anthropic.com'],
    },
    port: {
      value: 'N',
      default: 8787,
      parse: (text) => boundedInteger('--port', text, 0, 65_535, '(the largest TCP port; 0 picks a free one)'),
      help: ['the port to listen on (default 8787; 0 picks a free port)'],
    },
    host: {
      value: 'HOST',
      default: '127.0.0.1',
      parse: (text) => {
        if (text.trim() === '') throw new UsageError('--host must name an interface address, got ""')
        return text
      },
      help: ['the address to listen on (default 127.0.0.1; any other needs a token)'],
    },
    token: {
      value: 'TOKEN',
      needs: 'a token',
      help: [`the token agents must send (required off loopback; default: $${TOKEN_ENV})`],
    },
    warmSummaries: {
      value: 'MODE',
      default: 'off',
      parse: (text) => oneOf('--warm-summaries', text, WARM_MODES),
      help: ['off: observe only (default); dry-run: log the rewrite it would make; on: send it'],
    },
    log: {
      value: 'FILE',
      needs: 'a file name',
      help: ['append every request and its analysis here (JSONL, mode 0600)'],
    },
    store: {
      value: 'SPEC',
      needs: 'sqlite:PATH or postgres:URL',
      parse: proxyStore,
      help: [
        'write every request to an SQL store instead (sqlite:PATH | postgres:URL); replicas',
        "sharing one find each other's last requests (warmfold report --store SPEC SESSION)",
      ],
    },
    noBodies: { default: false, help: ['log digests and usage only, never a request body'] },
    price: {
      value: 'PROFILE',
      needs: 'a price profile',
      parse: readPriceProfile,
      help: [`what each request cost: ${PRICE_SYNTAX}`],
    },
    help: { short: 'h', default: false, help: ['show this help'] },
  },
}

/** `warmfold proxy --help`, printed from the flag table. */
export const PROXY_USAGE = formatUsage(PROXY_FLAGS)

/**
 * Parses `warmfold proxy` arguments; `env` is where the token may come from.
 * @throws UsageError naming the bad flag and value (never the token's value).
 */
export function parseProxyArgs(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): ProxyArgs {
  const { values } = parseFlags(PROXY_FLAGS, argv)
  const { upstream, token: flagToken, log, store, ...rest } = values
  const token = flagToken ?? (env[TOKEN_ENV] || undefined)
  const args = { ...rest, token, log, store }
  if (values.help) return { upstream: upstream ?? '', ...args }
  if (upstream === undefined)
    throw new UsageError('warmfold proxy needs --upstream URL, the provider base URL to forward to')
  if (log !== undefined && store !== undefined)
    throw new UsageError(
      `--log and --store are exclusive: the proxy writes to one of them (got --log ${JSON.stringify(log)} ` +
        `and --store ${store.kind}:…)`,
    )
  if (token !== undefined && token.length < 16)
    throw new UsageError(`the proxy token must be at least 16 characters, got ${token.length}`)
  if (!isLoopbackHost(values.host) && token === undefined)
    throw new UsageError(
      `--host ${values.host} lets other machines reach the proxy; give a token with --token or ${TOKEN_ENV} ` +
        '(agents send it as x-warmfold-proxy-token or in the base URL, /_t/TOKEN/…)',
    )
  return { upstream, ...args }
}

/** The `--upstream` URL: http(s), no credentials (the agent sends its own), no query or fragment. */
function upstreamUrl(text: string): string {
  const url = URL.canParse(text) ? new URL(text) : undefined
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || !url.host)
    throw new UsageError(
      `--upstream must be an http(s) base URL, got ${JSON.stringify(text.replace(/\/\/[^/\s]*@/, '//…@'))}`,
    )
  const shown = `${url.protocol}//${url.host}${url.pathname}`
  if (url.username || url.password)
    throw new UsageError(
      `--upstream must not carry credentials (the agent sends its own key), got ${shown} with credentials`,
    )
  if (url.search || url.hash)
    throw new UsageError(
      `--upstream must be a base URL without a query or fragment (request paths are appended), got ${shown} with ` +
        (url.search ? 'a query' : 'a fragment'),
    )
  return text.replace(/\/+$/, '')
}

/** `--store`: `sqlite:PATH` or `postgres:URL`; a `file:` store is refused naming the flag. */
function proxyStore(text: string): ProxyStoreSpec {
  const spec = parseStoreSpec('--store', text)
  if (spec.kind === 'file')
    throw new UsageError(
      `--store for warmfold proxy must be sqlite:PATH or postgres:URL (an SQL store replicas can share), ` +
        `got ${JSON.stringify(redactUrl(text))}; for a file use --log FILE`,
    )
  return spec
}
