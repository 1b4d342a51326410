import type { ServerResponse } from 'node:http'
import type {
  AnswerFacts,
  Exchange,
  ExchangeObserver,
  InboundRequest,
  RequestMemory,
  WarmMode,
  WarmPlan,
  WarmPlanner,
} from '../proxy-exchange.ts'
import type { AnswerReading } from './answer-reader.ts'
import { AnswerReader } from './answer-reader.ts'
import { AnswerTap } from './answer-tap.ts'
import { rawHeader } from './forward-headers.ts'
import type { ForwardTarget, RelayOutcome } from './forward-request.ts'
import { errorBody, relayAnswer, sendUpstream, sendWhole } from './forward-request.ts'

/** The parts an exchange runs with, read per request (a host may give the observer or planner late). */
export interface ExchangeParts {
  readonly target: ForwardTarget
  readonly mode: WarmMode
  readonly observer: ExchangeObserver
  readonly planner: WarmPlanner
  /** Called when an observer or planner throws (they must never break the forward). */
  readonly onPartError: (part: 'observer' | 'planner', error: unknown) => void
  /** Called when a rewrite was dropped and the original is about to be sent. */
  readonly onFailOpen: (request: InboundRequest, reason: string) => void
  /** How long and how much of a rewrite's answer is held for its first text (`maxHoldMs`, `maxHoldBytes`). */
  readonly hold: { readonly ms: number; readonly bytes: number }
  /** Called when that limit released a rewrite's answer as it came, with why. */
  readonly onHoldReleased: (request: InboundRequest, reason: string) => void
}

/**
 * Forwards one request and relays its answer. In `off` mode (and for anything but a generate
 * request) that is all: the body is never parsed on the way. Otherwise the planner decides first;
 * in `on` mode a rewrite is sent instead, its answer held back until it shows text (then streamed
 * on) or a tool call or error status (then dropped, and the original sent once: fail-open, never a
 * second extra call). The observer gets the exchange after the answer ended.
 */
export async function runExchange(
  request: InboundRequest,
  client: ServerResponse,
  parts: ExchangeParts,
): Promise<void> {
  const plan = await planFor(request, parts)
  let failOpen: Exchange['failOpen']
  if (parts.mode === 'on' && plan?.action === 'rewrite') {
    const rewritten = await attempt(request, plan.body, client, parts, true)
    if (rewritten.kind === 'relayed')
      return observe(parts, { request, sent: plan.body, plan, answer: rewritten.answer })
    failOpen = { reason: rewritten.reason, rewrittenAnswer: rewritten.answer }
    parts.onFailOpen(request, rewritten.reason)
  }
  const original = await attempt(request, request.body, client, parts, false)
  observe(parts, {
    request,
    sent: request.body,
    ...(plan ? { plan } : {}),
    answer: original.answer,
    ...(failOpen ? { failOpen } : {}),
  })
}

/**
 * The plan for `request`; when the planner asked the observer's memory and it held nothing, and
 * the observer can recall from a shared store (replicas), once more after the recall.
 */
async function planFor(request: InboundRequest, parts: ExchangeParts): Promise<WarmPlan | undefined> {
  if (parts.mode === 'off' || request.route.kind !== 'generate' || request.route.api === undefined) return undefined
  let json: unknown
  try {
    json = JSON.parse(request.body.toString('utf8'))
  } catch (error) {
    return { action: 'forward', reason: `the body is not JSON (forwarded unchanged): ${(error as Error).message}` }
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json))
    return { action: 'forward', reason: 'the body is not a JSON object (forwarded unchanged)' }
  const body = json as Record<string, unknown>
  const { observer } = parts
  let missed = false
  const memory: RequestMemory = {
    lastConversationFor: (api, query) => {
      const found = observer.lastConversationFor(api, query)
      if (!found) missed = true
      return found
    },
    recentConversations: observer.recentConversations?.bind(observer),
  }
  try {
    const plan = parts.planner.plan(request, body, memory)
    if (plan.action === 'rewrite' || !missed || !observer.recall) return plan
    const api = request.route.api
    return (await observer.recall(api, body)) ? parts.planner.plan(request, body, observer) : plan
  } catch (error) {
    parts.onPartError('planner', error)
    return { action: 'forward', reason: `the planner failed (forwarded unchanged): ${(error as Error).message}` }
  }
}

type Attempt =
  | { readonly kind: 'relayed'; readonly answer: AnswerFacts }
  | { readonly kind: 'refused'; readonly reason: string; readonly answer: AnswerFacts }

async function attempt(
  request: InboundRequest,
  body: Buffer,
  client: ServerResponse,
  parts: ExchangeParts,
  hold: boolean,
): Promise<Attempt> {
  let call
  try {
    call = await sendUpstream(parts.target, request.method, request.url, request.rawHeaders, body)
  } catch (error) {
    const cause = (error as Error).message
    const answer = facts(request, 502, {
      streamed: false,
      content: 'unknown',
      unreadable: `upstream unreachable: ${cause}`,
    })
    if (hold) return { kind: 'refused', reason: `the rewritten request could not be sent: ${cause}`, answer }
    sendUnreachable(client, parts.target.url, cause)
    return { kind: 'relayed', answer }
  }
  const { response } = call
  const streamed = /^text\/event-stream/i.test(rawHeader(response.rawHeaders, 'content-type') ?? '')
  const reader = new AnswerReader(request.route.kind === 'generate' ? request.route.api : undefined, streamed)
  const tap = new AnswerTap(reader, rawHeader(response.rawHeaders, 'content-encoding'))
  let holdReleased: string | undefined
  const limit = hold
    ? {
        ...parts.hold,
        onRelease: (reason: string) => {
          holdReleased = reason
          parts.onHoldReleased(request, reason)
        },
      }
    : undefined
  const outcome: RelayOutcome = await relayAnswer(call, client, tap, limit)
  const reading = holdReleased === undefined ? outcome.reading : { ...outcome.reading, holdReleased }
  const answer = facts(
    request,
    outcome.status,
    reading,
    outcome.endedAt,
    outcome.kind === 'relayed' ? outcome.firstByteAt : undefined,
  )
  return outcome.kind === 'relayed' ? { kind: 'relayed', answer } : { kind: 'refused', reason: outcome.reason, answer }
}

function facts(
  request: InboundRequest,
  status: number,
  reading: AnswerReading & { readonly holdReleased?: string },
  endedAt = Date.now(),
  firstByteAt?: number,
): AnswerFacts {
  return {
    status,
    ...reading,
    ...(firstByteAt === undefined ? {} : { firstByteMs: firstByteAt - request.receivedAt }),
    totalMs: endedAt - request.receivedAt,
  }
}

/** The 502 answer when the upstream cannot be reached: names the upstream and the cause. */
function sendUnreachable(client: ServerResponse, upstream: URL, cause: string): void {
  if (client.headersSent || client.destroyed) return
  // Without user:password, should the configured URL carry any.
  const name = `${upstream.protocol}//${upstream.host}${upstream.pathname}`
  const message = `warmfold proxy: the upstream ${name} could not be reached: ${cause}`
  sendWhole(client, 502, errorBody('upstream_unreachable', message, { upstream: name }))
}

function observe(parts: ExchangeParts, exchange: Exchange): void {
  try {
    parts.observer.observe(exchange)
  } catch (error) {
    parts.onPartError('observer', error)
  }
}
