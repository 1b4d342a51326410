import type { RequestApi } from '@warmfold/cache-ledger/prefix'
import { RequestShapeError } from '@warmfold/cache-ledger/prefix'
import type {
  InboundRequest,
  RememberedRequest,
  RequestMemory,
  SummaryRecognition,
  WarmPlan,
  WarmPlanner,
} from '../proxy-exchange.ts'
import { withoutCallIdPrefixes } from './gemini-call-ids.ts'
import type { AgentMatch } from './known-agents.ts'
import { hasVerificationCall, matchKnownAgent } from './known-agents.ts'
import type { ReplayCost } from './replay-cost.ts'
import { describeReplayCost, replayCost } from './replay-cost.ts'
import { RewrittenRequests } from './rewritten-requests.ts'
import { structuralDiff } from './structural-diff.ts'
import { wrapInstruction } from './summary-instruction.ts'
import { summaryText, transcribedConversation } from './summary-text.ts'
import { buildWarmRequest } from './warm-request.ts'
import type { WireView } from './wire-view.ts'
import { asksStructuredOutput, forcedToolChoice, modelOf, wireViewOf } from './wire-view.ts'

/** How the warm room decides. */
export interface WarmSummaryPlannerOptions {
  /**
   * Cache TTL per API in ms: a conversation request older than this is not replayed (its cache
   * is gone, a rewrite buys nothing). Default 5 minutes for each (Anthropic's default, OpenAI's in-memory floor).
   */
  readonly ttlMs?: Partial<Record<RequestApi, number>>
  /** Least confidence (0..1) to rewrite; default 0.8: a known agent's marker and the structure. */
  readonly minConfidence?: number
  /** Rewrites remembered for calls that extend them (Gemini CLI's verification call); default 32. */
  readonly rewrittenEntries?: number
  /**
   * The price of a cache read relative to an uncached input token (a `--price` profile's
   * `cacheRead`). When given, a summary request is rewritten only when the replay costs less at
   * that price than the request as written ({@link replayCost}); a transcript agent's replay reads
   * the whole cached conversation, which can cost more than its cut transcript. Default: no price,
   * every recognised request with a held conversation is rewritten.
   */
  readonly cacheRead?: number
}

const DEFAULT_TTL_MS = 5 * 60_000
const FORWARD: WarmPlan = Object.freeze({ action: 'forward' })

/** Structure alone (same session, history repeated, system or tools changed, ends in an instruction). */
const STRUCTURE_CONFIDENCE = 0.6
const MARKER_CONFIDENCE = 0.2

/**
 * The warm room's planner: recognises a foreign agent's summary request (structure plus the
 * versioned markers of {@link KNOWN_AGENTS}) and rewrites it into the warm shape: the session's
 * last conversation request whole, then the agent's summarization text as the final user
 * content. Pure and synchronous (no I/O); its only state is the bounded map of rewrites that a
 * later call may extend.
 */
export class WarmSummaryPlanner implements WarmPlanner {
  private readonly rewritten: RewrittenRequests
  private readonly minConfidence: number

  constructor(private readonly options: WarmSummaryPlannerOptions = {}) {
    const min = options.minConfidence ?? 0.8
    if (!(min >= 0 && min <= 1))
      throw new RangeError(`WarmSummaryPlanner: minConfidence must be within 0..1, got ${String(min)}`)
    for (const [api, ttl] of Object.entries(options.ttlMs ?? {}))
      if (!(typeof ttl === 'number' && ttl > 0))
        throw new RangeError(`WarmSummaryPlanner: ttlMs.${api} must be a positive number, got ${String(ttl)}`)
    const { cacheRead } = options
    if (cacheRead !== undefined && !(Number.isFinite(cacheRead) && cacheRead >= 0))
      throw new RangeError(`WarmSummaryPlanner: cacheRead must be a finite number ≥ 0, got ${String(cacheRead)}`)
    this.minConfidence = min
    this.rewritten = new RewrittenRequests(options.rewrittenEntries ?? 32)
  }

  plan(request: InboundRequest, json: Readonly<Record<string, unknown>>, memory: RequestMemory): WarmPlan {
    const api = request.route.api
    if (api === undefined || request.route.kind !== 'generate') return FORWARD
    const view = wireViewOf(api, json)
    if (!view.endsInInstruction) return FORWARD
    const match = matchKnownAgent(api, view.systemText, view.instructionText)
    const extended = this.rewritten.extended(api, view.items, request.receivedAt, this.ttlOf(api))
    if (extended) return this.planExtension(api, json, view, extended, request.receivedAt)
    // A request that keeps tools and carries no marker is a conversation turn (or already warm).
    if (!match && view.toolCount > 0) return FORWARD
    if (match?.known.shape === 'warm')
      return left(
        match,
        0.5,
        `${match.known.name}'s summary request is already warm (a replay with the instruction appended)`,
      )
    if (match?.known.call === 'verification')
      return left(match, 0.4, 'it extends no summary request this proxy rewrote: left as the agent sent it')
    const query = api === 'gemini' ? { ...json, contents: withoutCallIdPrefixes(view.items) } : json
    const conversation =
      memory.lastConversationFor(api, query) ??
      (match?.known.shape === 'transcript'
        ? transcribedConversation(api, view, match.known, memory.recentConversations?.(api) ?? [])
        : undefined)
    if (!conversation) {
      if (!match) return FORWARD
      const held =
        match.known.shape === 'transcript' ? 'the history it transcribes' : 'the conversation request it repeats'
      return left(match, 0.4, `no remembered conversation request: the proxy does not hold ${held}`)
    }
    return this.planReplay(request, api, json, view, match, conversation)
  }

  private planReplay(
    request: InboundRequest,
    api: RequestApi,
    json: Readonly<Record<string, unknown>>,
    view: WireView,
    match: AgentMatch | undefined,
    conversation: RememberedRequest,
  ): WarmPlan {
    const before = wireViewOf(api, conversation.json)
    const changed: string[] = []
    if (before.systemText !== view.systemText) changed.push('system prompt changed')
    if (before.toolCount > view.toolCount) changed.push(`tools ${before.toolCount} → ${view.toolCount}`)
    const model = modelOf(api, json, request.url)
    const conversationModel = modelOf(api, conversation.json, conversation.request.url)
    // Without markers, a side query (another model, or structured output: a classifier) is no summary.
    if (!match && (changed.length === 0 || model !== conversationModel || asksStructuredOutput(json))) return FORWARD
    const structure = `same session, its history repeats conversation request #${conversation.request.id}, ${
      changed.length ? changed.join(', ') : 'system and tools kept'
    }, ends in an instruction`
    const markers = match ? Number(match.systemMarker) + Number(match.instructionMarker) : 0
    const confidence = rounded((changed.length ? STRUCTURE_CONFIDENCE : 0.4) + MARKER_CONFIDENCE * markers)
    const recognition: SummaryRecognition = {
      agent: match?.known.agent ?? 'structure',
      confidence,
      reason: match ? `${markersFound(match)}; ${structure}` : structure,
    }
    const leave = (why: string): WarmPlan => ({ action: 'forward', reason: why, summary: recognition })
    if (!match) return leave("a summary request by its structure, but no known agent's markers: left alone")
    if (changed.length === 0)
      return leave("already warm: it keeps the conversation's system prompt and tools and appends the instruction")
    const age = request.receivedAt - conversation.request.receivedAt
    const ttl = this.ttlOf(api)
    if (age > ttl)
      return leave(
        `the last conversation request is ${Math.round(age / 1000)} s old, past the cache TTL of ` +
          `${Math.round(ttl / 1000)} s: a rewrite buys nothing`,
      )
    if (confidence < this.minConfidence)
      return leave(`confidence ${confidence.toFixed(2)} is below the minimum of ${this.minConfidence}`)
    if (api === 'gemini' && model !== conversationModel)
      return leave(
        `it asks for model ${String(model)} in its URL, the conversation used ${String(conversationModel)} ` +
          '(a cache is per model, and a rewrite cannot change the URL)',
      )
    const forced = forcedToolChoice(api, conversation.json)
    if (forced !== undefined)
      return leave(`the conversation forces a tool call (${forced}): a replay keeps that and could not answer in text`)
    const text = summaryText(api, view, before, match.known)
    if ('reason' in text) return leave(text.reason)
    const built = buildWarmRequest({
      api,
      conversation: conversation.json,
      extra: text.extra,
      text: text.wrapped,
      summary: json,
    })
    const { cacheRead } = this.options
    let cost: ReplayCost | undefined
    try {
      const jsons = { conversation: conversation.json, original: json, rewritten: built.json }
      cost = cacheRead === undefined ? undefined : replayCost(api, request.url, jsons, cacheRead)
    } catch (error) {
      if (!(error instanceof RequestShapeError)) throw error
      return leave(`the replay's cost could not be weighed (${error.message}): sent as written`)
    }
    if (cost && cost.rewritten >= cost.original)
      return leave(`${describeReplayCost(cost)}: the replay costs more, so the request is sent as written`)
    const diff = structuralDiff(
      api,
      json,
      built.json,
      {
        replayed: before.items.length - before.head,
        kept: text.extra.length,
        replaced: view.items.length - view.head - 1 - text.extra.length,
        placement: built.placement,
        instructionChars: text.wrapped.length,
        ...(text.transcriptChars === undefined ? {} : { transcriptChars: text.transcriptChars }),
      },
      cost ? [...built.notes, describeReplayCost(cost)] : built.notes,
    )
    // Kept (and hashed) only for an agent whose next call extends its summary request.
    if (hasVerificationCall(match.known.agent))
      this.rewritten.remember(
        { api, json: built.json, replays: conversation, recognition, at: request.receivedAt },
        view.items,
      )
    return rewrite(built.json, recognition, conversation, diff)
  }

  /** A call that extends a rewritten request by the model's answer and a new instruction: extend the rewrite. */
  private planExtension(
    api: RequestApi,
    json: Readonly<Record<string, unknown>>,
    view: WireView,
    extended: ReturnType<RewrittenRequests['extended']> & object,
    at: number,
  ): WarmPlan {
    const answer = view.items.at(-2)
    const extra = api === 'gemini' ? withoutCallIdPrefixes([answer]) : [answer]
    const wrapped = wrapInstruction({ agent: extended.recognition.agent, instruction: view.instructionText })
    const built = buildWarmRequest({ api, conversation: extended.json, extra, text: wrapped, summary: json })
    const recognition: SummaryRecognition = {
      agent: extended.recognition.agent,
      confidence: 1,
      reason:
        `its messages are a rewritten summary request's plus the model's answer and a new instruction ` +
        `(digest match): rewritten the same way, so it extends what was sent`,
    }
    const diff = structuralDiff(
      api,
      json,
      built.json,
      {
        replayed: wireViewOf(api, extended.json).items.length,
        kept: 1,
        replaced: view.items.length - 1,
        extendsRewrite: true,
        placement: built.placement,
        instructionChars: wrapped.length,
      },
      built.notes,
    )
    this.rewritten.remember({ api, json: built.json, replays: extended.replays, recognition, at }, view.items)
    return rewrite(built.json, recognition, extended.replays, diff)
  }

  private ttlOf(api: RequestApi): number {
    return this.options.ttlMs?.[api] ?? DEFAULT_TTL_MS
  }
}

/** The plan that sends `json`, the warm rewrite, in place of the summary request. */
function rewrite(
  json: Readonly<Record<string, unknown>>,
  recognition: SummaryRecognition,
  replays: RememberedRequest,
  diff: readonly string[],
): WarmPlan {
  return { action: 'rewrite', body: Buffer.from(JSON.stringify(json)), recognition, replays, diff }
}

/** A summary request left as the agent sent it, with why. */
function left(match: AgentMatch, confidence: number, reason: string): WarmPlan {
  const markers = Number(match.systemMarker) + Number(match.instructionMarker)
  return {
    action: 'forward',
    reason,
    summary: {
      agent: match.known.agent,
      confidence: rounded(confidence + MARKER_CONFIDENCE * (markers - 1)),
      reason: markersFound(match),
    },
  }
}

/** `Codex CLI markers (instruction)`: the agent, and which of its markers the request carries. */
function markersFound(match: AgentMatch): string {
  const which = [match.systemMarker ? 'system prompt' : '', match.instructionMarker ? 'instruction' : '']
  return `${match.known.name} markers (${which.filter(Boolean).join(' and ')})`
}

/** A confidence within 0..1, to two decimals (0.4 + 0.2 is 0.6, not 0.6000000000000001). */
function rounded(confidence: number): number {
  return Math.min(1, Math.round(confidence * 100) / 100)
}
