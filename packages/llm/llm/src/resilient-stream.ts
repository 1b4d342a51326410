import type { AdapterCallContext } from './adapter-call-context.ts'
import { withIdleTimeout } from './idle-timeout.ts'
import { LlmError } from './llm-error.ts'
import type { AttemptLimits } from './retry-stream.ts'
import { retryStream } from './retry-stream.ts'
import type { StreamChunk } from './stream-chunk.ts'

/** One call of an HTTP adapter, as {@link resilientStream} bounds and retries it. */
export interface ResilientCall<E> extends AttemptLimits, Omit<AdapterCallContext, 'secret'> {
  /** Appended to the stall error's message, e.g. what does not count as progress. */
  readonly stallNote?: string
  /**
   * Sends one attempt with `signal` (aborted by the caller, the deadline or a stall) and returns
   * the provider's events. The wait for the response happens inside the idle timeout.
   */
  readonly open: (signal: AbortSignal, attempt: number) => AsyncIterable<E> | Promise<AsyncIterable<E>>
  /** A fresh predicate per attempt: whether an event is progress (pings and empty deltas are not). */
  readonly progress: () => (event: E) => boolean
  /** Maps the provider's events to chunks; `signal` is the call's (caller and deadline). */
  readonly map: (events: AsyncIterable<E>, signal: AbortSignal) => AsyncIterable<StreamChunk>
  /** Maps anything an attempt throws to an `LlmError` (an abort by the caller to `ABORTED`). */
  readonly mapError: (error: unknown) => LlmError
}

/**
 * The resilience every HTTP adapter needs, in one place: each attempt is watched by
 * {@link withIdleTimeout} (the response and then stream progress within `timeoutMs`, cancelled
 * through its own controller so the caller's signal is untouched), failures are retried by
 * {@link retryStream} only before output, and the whole call fails with `TIMEOUT` once it
 * outlasts `deadlineMs`. A wait between attempts that would outlast `deadlineMs`, or a
 * `retry-after` longer than `MAX_RETRY_AFTER_SECONDS`, is not started: the failure itself
 * (a `RATE_LIMITED` with its `retryAfterSeconds`) goes to the caller.
 */
export async function* resilientStream<E>(call: ResilientCall<E>): AsyncGenerator<StreamChunk> {
  const { provider, model, deadlineMs } = call
  const deadline = new AbortController()
  const startedAt = performance.now()
  const timer = deadlineMs === undefined ? undefined : setTimeout(() => deadline.abort(), deadlineMs)
  // Attempts and the waits between them stop on the caller's abort and on the deadline alike.
  const signal = call.signal ? AbortSignal.any([call.signal, deadline.signal]) : deadline.signal
  const overDeadline = () =>
    new LlmError('TIMEOUT', `${provider}/${model}: the call did not finish within deadlineMs (${deadlineMs} ms)`, {
      provider,
      retryable: false,
    })
  try {
    yield* retryStream((attempt) => watchedAttempt(call, signal, attempt), {
      maxRetries: call.maxRetries,
      retryBaseMs: call.retryBaseMs,
      // A wait the deadline would cut short is not started: a 429 then reaches the host as
      // RATE_LIMITED with its retry-after, not as a TIMEOUT that hides it.
      ...(deadlineMs === undefined ? {} : { remainingMs: () => deadlineMs - (performance.now() - startedAt) }),
      signal,
      mapError: (error) => (deadline.signal.aborted && !call.signal?.aborted ? overDeadline() : call.mapError(error)),
    })
  } finally {
    clearTimeout(timer)
  }
}

async function* watchedAttempt<E>(
  call: ResilientCall<E>,
  signal: AbortSignal,
  attempt: number,
): AsyncGenerator<StreamChunk> {
  // A local controller, so a stalled attempt can be cancelled without touching the caller's signal.
  const controller = new AbortController()
  const forward = () => controller.abort(signal.reason)
  if (signal.aborted) forward()
  signal.addEventListener('abort', forward, { once: true })
  const events = async function* (): AsyncGenerator<E> {
    yield* await call.open(controller.signal, attempt)
  }
  const { provider, model, timeoutMs } = call
  try {
    yield* call.map(
      withIdleTimeout(events(), {
        timeoutMs,
        isProgress: call.progress(),
        failure: () =>
          new LlmError(
            'TIMEOUT',
            `${provider}/${model}: no response or stream progress for timeoutMs (${timeoutMs} ` +
              `ms)${call.stallNote ?? ''}`,
            { provider },
          ),
        onTimeout: () => controller.abort(),
      }),
      signal,
    )
  } finally {
    signal.removeEventListener('abort', forward)
  }
}

/**
 * The entry of `model` in an adapter's model table.
 * @throws LlmError `UNKNOWN_MODEL` naming the model, the provider and the configured models.
 */
export function modelEntry<T>(models: { readonly [model: string]: T }, provider: string, model: string): T {
  if (Object.hasOwn(models, model)) return models[model] as T
  const known = Object.keys(models).toSorted()
  throw new LlmError(
    'UNKNOWN_MODEL',
    `model "${model}" is not known to provider "${provider}"; known models: ` +
      `${known.length ? known.join(', ') : '(none: configure it under models)'}`,
    {
      provider,
      retryable: false,
    },
  )
}
