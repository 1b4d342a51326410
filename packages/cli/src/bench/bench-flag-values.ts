import { DEFAULT_PROBE_TIMEOUT_MS } from '@warmfold/prefix-cache-testkit'
import { UsageError } from '../shared/usage-error.ts'

/**
 * Largest `--windows` value, in tokens (the largest context window in common use). The
 * simulator keeps every distinct prompt segment, so memory grows with window × steps: `cold`,
 * the heaviest strategy, about 1.1 bytes per window token per step. At both bounds the default
 * three strategies peak at 2.8 GB and take 81 s on a 2-core machine, within Node's default
 * 4 GiB heap (they also complete in 3 GiB).
 */
export const MAX_WINDOW = 2_000_000

/** Largest `--steps` value: about 58 folds at any window; memory and time grow linearly with it. */
export const MAX_STEPS = 1000

/** Default `--probe-timeout`, in seconds. */
export const DEFAULT_PROBE_TIMEOUT_SECONDS = DEFAULT_PROBE_TIMEOUT_MS / 1000
/** Largest `--probe-timeout`, in seconds (far below Node's timer limit of 24.8 days). */
export const MAX_PROBE_TIMEOUT_SECONDS = 86_400

/** Largest `--temperature`: the widest range any provider documents (OpenAI and Gemini 0–2, Anthropic 0–1). */
export const MAX_TEMPERATURE = 2

/** Largest `--idle` and `--step-seconds`, in seconds (30 days: far beyond any provider's cache lifetime). */
export const MAX_VIRTUAL_SECONDS = 30 * 86_400

/**
 * The price `warmfold bench` bills with unless told otherwise: writes cost plain input, so every cache source can be
 * priced.
 */
export const DEFAULT_PRICE = 'deepseek'

/**
 * Windows that fit the embedded llama cache server's context (its tiny vocabulary makes about 2.8 tokens per
 * simulated token).
 */
export const LLAMA_WINDOWS = [8000, 16000]

/**
 * The `--cache-probe` URL: http(s), no credentials (a key belongs in `--probe-key-env`), no
 * query or fragment (the request path is appended to it). Messages show the URL without its
 * credentials and query.
 */
export function probeURL(text: string): string {
  const url = URL.canParse(text) ? new URL(text) : undefined
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || !url.host) {
    // Unparsable: nothing can be stripped, so credentials-looking text is cut out before quoting.
    const shown = JSON.stringify(text.replace(/\/\/[^/\s]*@/, '//…@'))
    throw new UsageError(`--cache-probe must be the http(s) base URL of the endpoint, got ${shown}`)
  }
  const shown = `${url.protocol}//${url.host}${url.pathname}`
  if (url.username || url.password)
    throw new UsageError(
      '--cache-probe must not carry credentials (user:password@); put the API key in an environment ' +
        `variable and name it with --probe-key-env; got ${shown} with credentials`,
    )
  if (url.search || url.hash)
    throw new UsageError(
      '--cache-probe must be a base URL without a query or fragment (requests go to {URL}/chat/completions), ' +
        `got ${shown} with ${url.search ? 'a query' : 'a fragment'}`,
    )
  return text
}
