import type { RequestApi } from '@warmfold/cache-ledger/prefix'
import {
  canonicalize,
  canonicalWireJson,
  commonPrefixLength,
  layoutOf,
  SegmentInterner,
} from '@warmfold/cache-ledger/prefix'
import type { InboundRequest, RememberedRequest, RequestMemory, WarmPlan } from '../src/index.ts'
import { comparableGeminiContents } from '../src/index.ts'

/** Paths per API, as the agents call them. */
export const PATHS: Readonly<Record<RequestApi, string>> = {
  'openai-chat': '/v1/chat/completions',
  'openai-responses': '/v1/responses',
  'anthropic-messages': '/v1/messages',
  gemini: '/v1beta/models/gemini-2.5-pro:generateContent',
}

let nextId = 1

/** An inbound generate request of `api` carrying `json`, received at `receivedAt`. */
export function inbound(
  api: RequestApi,
  json: Readonly<Record<string, unknown>>,
  receivedAt: number,
  url = PATHS[api],
): InboundRequest {
  const body = Buffer.from(JSON.stringify(json))
  return {
    id: nextId++,
    receivedAt,
    method: 'POST',
    url,
    route: { api, kind: 'generate', streamByPath: url.includes(':streamGenerateContent') },
    rawHeaders: ['content-type', 'application/json'],
    headers: { 'content-type': 'application/json' },
    body,
    stream: json.stream === true,
  }
}

/** A conversation request the memory holds. */
export function remembered(
  api: RequestApi,
  json: Readonly<Record<string, unknown>>,
  receivedAt: number,
  url = PATHS[api],
): RememberedRequest {
  return { request: inbound(api, json, receivedAt, url), api, json, sessionKey: 's1' }
}

function canonicalMessages(api: RequestApi, json: Readonly<Record<string, unknown>>, url?: string): string[] {
  const body = api === 'gemini' ? { ...json, contents: comparableGeminiContents(json.contents as unknown[]) } : json
  return canonicalize({ body, headers: {}, ...(url ? { url } : {}) }, api).messages.map((message) =>
    canonicalWireJson(message.value),
  )
}

/**
 * A small RequestMemory keeping the seam's contract: the held request whose canonical messages
 * are the longest prefix of the summary's messages but the last; else the latest one whose
 * messages those are a prefix of (two or more). Gemini contents compared as `comparableGeminiContents` makes them.
 */
export class HeldMemory implements RequestMemory {
  calls = 0
  constructor(private readonly held: readonly RememberedRequest[]) {}

  lastConversationFor(api: RequestApi, json: Readonly<Record<string, unknown>>): RememberedRequest | undefined {
    this.calls++
    const mine = canonicalMessages(api, json).slice(0, -1)
    const candidates = this.held.filter((request) => request.api === api)
    let best: RememberedRequest | undefined
    let bestLength = -1
    for (const request of candidates) {
      const theirs = canonicalMessages(api, request.json, request.request.url)
      if (theirs.length > mine.length || theirs.length <= bestLength) continue
      if (theirs.every((message, index) => message === mine[index])) {
        best = request
        bestLength = theirs.length
      }
    }
    if (best || mine.length < 2) return best
    return candidates.findLast((request) => {
      const theirs = canonicalMessages(api, request.json, request.request.url)
      return mine.length < theirs.length && mine.every((message, index) => message === theirs[index])
    })
  }

  /** Every held request of `api`, latest first (the seam's contract, without the TTL: the tests hold what they mean). */
  recentConversations(api: RequestApi): RememberedRequest[] {
    return this.held.filter((request) => request.api === api).toReversed()
  }
}

/** A memory that holds exactly `request` for any question (for transcript agents: the observer's job). */
export function holding(request: RememberedRequest | undefined): RequestMemory {
  return { lastConversationFor: () => request }
}

/**
 * Share of `conversation`'s canonical prompt (provider render order: tools, system, messages)
 * that `other` repeats as a prefix: 0 when their prompt-shaping envelopes differ (another cache family).
 */
export function prefixShare(
  api: RequestApi,
  conversation: Readonly<Record<string, unknown>>,
  other: Readonly<Record<string, unknown>>,
  url = PATHS[api],
): { share: number; envelope: boolean; chars: number } {
  const interner = new SegmentInterner()
  const left = canonicalize({ body: conversation, headers: {}, url }, api)
  const right = canonicalize({ body: other, headers: {}, url }, api)
  const envelope = canonicalWireJson(left.envelope) === canonicalWireJson(right.envelope)
  const text = (request: typeof left) =>
    layoutOf(request, interner)
      .segments.map((segment) => segment.text)
      .join('')
  const mine = text(left)
  const shared = envelope ? commonPrefixLength(mine, text(right)) : 0
  return { share: shared / mine.length, envelope, chars: mine.length }
}

/** The rewritten body of a plan, or a failure naming why it was not rewritten. */
export function rewrittenBody(plan: WarmPlan): Record<string, unknown> {
  if (plan.action !== 'rewrite') throw new Error(`expected a rewrite, got forward: ${plan.reason ?? '(no reason)'}`)
  return JSON.parse(plan.body.toString('utf8')) as Record<string, unknown>
}

/** Deterministic source-like text of `lines` lines (a file read, a tool output). */
export function sourceText(name: string, lines: number): string {
  const out: string[] = [`// ${name}`]
  for (let line = 0; line < lines; line++)
    out.push(
      `export function ${name.replace(/\W/g, '_')}_${line}(input: number): number { return input * ${line} + 7 }`,
    )
  return out.join('\n')
}

/** A long system prompt, as coding agents send. */
export function agentSystemPrompt(agent: string): string {
  const rules = Array.from(
    { length: 40 },
    (_, index) => `- Rule ${index}: keep changes minimal, read files before editing them, run the tests (${agent}).`,
  )
  return `You are ${agent}, an interactive coding agent.\n\n# Rules\n${rules.join('\n')}`
}

/** A JSON-schema function parameter block. */
export function parameters(...names: string[]): Record<string, unknown> {
  return {
    type: 'object',
    properties: Object.fromEntries(names.map((name) => [name, { type: 'string', description: `the ${name}` }])),
    required: names,
  }
}

export const TOOL_NAMES = ['read_file', 'write_file', 'edit', 'shell', 'grep', 'glob', 'list_dir', 'web_fetch']
