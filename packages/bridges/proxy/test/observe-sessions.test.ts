import { describe, expect, it } from 'vitest'
import type { Exchange } from '../src/index.ts'
import { ProxyObserver } from '../src/index.ts'
import type { CapturedRequest } from './support/observe-capture.ts'
import { exchangeOf, usage } from './support/observe-capture.ts'
import { settle } from './support/observe-settle.ts'
import { capture, H1, H2, H3, user } from './support/observe-sdk.ts'

const TTL = 300_000

function feed(observer: ProxyObserver, requests: readonly CapturedRequest[], start = 1, at = 1_000_000): Exchange[] {
  return requests.map((request, index) => {
    const exchange = exchangeOf(request, { id: start + index, at: at + index * 1000, usage: usage(1000, 500) })
    observer.observe(exchange)
    return exchange
  })
}

const OTHER = [user('Add a snooze button to the kettle timer.')]

describe('sessions', () => {
  it("group by the agent's session header, a subagent apart", async () => {
    const a = { headers: { 'x-claude-code-session-id': 'A' } }
    const b = { headers: { 'x-claude-code-session-id': 'B' } }
    const sub = { headers: { 'x-claude-code-session-id': 'A', 'x-claude-code-agent-id': 'explore-1' } }
    const requests = await capture('anthropic-messages', [
      [H1, a],
      [H1, b],
      [H2, a],
      [OTHER, sub],
      [H2, b],
    ])
    const observer = new ProxyObserver()
    feed(observer, requests)
    await settle(observer)
    const sessions = observer.snapshot().sessions
    expect(sessions.map((session) => [session.key, session.requests, session.by]).toSorted()).toEqual([
      ['anthropic-messages x-claude-code-session-id=A agent=explore-1', 1, 'header x-claude-code-session-id'],
      ['anthropic-messages x-claude-code-session-id=A', 2, 'header x-claude-code-session-id'],
      ['anthropic-messages x-claude-code-session-id=B', 2, 'header x-claude-code-session-id'],
    ])
    expect(sessions.every((session) => session.agent === 'Anthropic SDK')).toBe(true)
    await observer.close()
  })

  it('group by prompt_cache_key (Responses) and metadata.user_id (Anthropic) in the body', async () => {
    const responses = await capture('openai-responses', [
      [H1, { sessionInBody: 'conv-1' }],
      [OTHER, { sessionInBody: 'conv-2' }],
      [H2, { sessionInBody: 'conv-1' }],
    ])
    const anthropic = await capture('anthropic-messages', [
      [H1, { sessionInBody: 'user_1_session_9' }],
      [H2, { sessionInBody: 'user_1_session_9' }],
    ])
    const observer = new ProxyObserver()
    feed(observer, [...responses, ...anthropic])
    await settle(observer)
    expect(
      observer
        .snapshot()
        .sessions.map((session) => [session.key, session.requests])
        .toSorted(),
    ).toEqual([
      ['anthropic-messages user_id=user_1_session_9', 2],
      ['openai-responses prompt_cache_key=conv-1', 2],
      ['openai-responses prompt_cache_key=conv-2', 1],
    ])
    await observer.close()
  })

  it('group by prefix containment without a session header, and keep the request after a fold in its session', async () => {
    const requests = await capture('openai-chat', [
      [H1, {}],
      [OTHER, {}],
      [H2, {}],
      [[...OTHER, user('Make it ring twice.')], {}],
      [H3, {}],
      [[...H3, user('Write a hand-over note.')], { tools: false }],
      [[user('Summary: fixed the rounding.'), user('Go on.')], {}],
    ])
    const observer = new ProxyObserver()
    requests.forEach((request, index) => {
      const summary = index === 5
      observer.observe(
        exchangeOf(request, {
          id: index + 1,
          at: 1_000_000 + index * 1000,
          usage: usage(1000, 500),
          ...(summary
            ? { plan: { action: 'forward', summary: { agent: 'qwen', confidence: 1, reason: 'test' } } }
            : {}),
        }),
      )
    })
    await settle(observer)
    const sessions = observer.snapshot().sessions
    expect(sessions.map((session) => [session.by, session.requests, session.compactions, session.breaks])).toEqual([
      ['containment', 5, 1, 1],
      ['containment', 2, 0, 0],
    ])
    expect(observer.snapshot().breaks.map((item) => [item.id, item.cause])).toEqual([[7, 'fold']])
    await observer.close()
  })
})

describe('lastConversationFor', () => {
  it('finds the conversation request a summary repeats, never a summary request, within the cache TTL', async () => {
    let now = 1_000_000
    const observer = new ProxyObserver({ cacheTtlMs: TTL, now: () => now })
    const summaryHistory = [...H3, user('Write a hand-over note.')]
    const requests = await capture('openai-chat', [
      [H2, { headers: { 'x-session-id': 'A' } }],
      [OTHER, { headers: { 'x-session-id': 'B' } }],
      [H3, { headers: { 'x-session-id': 'A' } }],
      [summaryHistory, { headers: { 'x-session-id': 'A' }, tools: false }],
    ])
    feed(observer, requests.slice(0, 3), 1, now - 3000)
    const summaryJson = JSON.parse((requests[3] as CapturedRequest).body.toString('utf8')) as Record<string, unknown>
    // Not analysed yet: the lookup analyses what is queued first.
    const found = observer.lastConversationFor('openai-chat', summaryJson)
    expect(found?.request.id).toBe(3)
    expect(found?.sessionKey).toBe('openai-chat x-session-id=A')
    expect(found?.request.body.equals((requests[2] as CapturedRequest).body)).toBe(true)
    // A summary request is observed, and a call that extends it (Gemini's verification) still finds the conversation.
    observer.observe(
      exchangeOf(requests[3] as CapturedRequest, {
        id: 4,
        at: now,
        usage: usage(1000, 900),
        plan: { action: 'forward', summary: { agent: 'structure', confidence: 1, reason: 'test' } },
      }),
    )
    const verification = {
      ...summaryJson,
      messages: [
        ...(summaryJson.messages as unknown[]),
        { role: 'assistant', content: 'note' },
        { role: 'user', content: 'Check it.' },
      ],
    }
    expect(observer.lastConversationFor('openai-chat', verification)?.request.id).toBe(3)
    expect(observer.lastConversationFor('anthropic-messages', summaryJson)).toBeUndefined()
    now += TTL
    expect(observer.lastConversationFor('openai-chat', summaryJson)).toBeUndefined()
    await observer.close()
  })
})

describe('recentConversations', () => {
  it("gives each session's last conversation request of the API within the cache TTL, latest first", async () => {
    let now = 1_000_000
    const observer = new ProxyObserver({ cacheTtlMs: TTL, now: () => now })
    const requests = await capture('openai-chat', [
      [H2, { headers: { 'x-session-id': 'A' } }],
      [OTHER, { headers: { 'x-session-id': 'B' } }],
      [H3, { headers: { 'x-session-id': 'A' } }],
    ])
    feed(observer, requests.slice(0, 2), 1, now - 3000)
    feed(observer, requests.slice(2), 3, now - 1000)
    // Not analysed yet: it analyses what is queued first.
    expect(observer.recentConversations('openai-chat').map((held) => held.request.id)).toEqual([3, 2])
    expect(observer.recentConversations('anthropic-messages')).toEqual([])
    now += TTL - 1500
    expect(observer.recentConversations('openai-chat').map((held) => held.request.id)).toEqual([3])
    await observer.close()
  })
})

describe('bounds', () => {
  it('drop sessions idle past the cache TTL × forgetAfterTtls, with what they remember', async () => {
    const requests = await capture('openai-chat', [
      [H1, { headers: { 'x-session-id': 'old' } }],
      [OTHER, { headers: { 'x-session-id': 'new' } }],
    ])
    const observer = new ProxyObserver({ cacheTtlMs: TTL, forgetAfterTtls: 2 })
    observer.observe(exchangeOf(requests[0] as CapturedRequest, { id: 1, at: 0 }))
    await settle(observer)
    expect(observer.memory()).toMatchObject({ sessions: 1, rememberedBodies: 1 })
    observer.observe(exchangeOf(requests[1] as CapturedRequest, { id: 2, at: 2 * TTL + 1 }))
    await settle(observer)
    expect(observer.snapshot().sessions.map((session) => session.key)).toEqual(['openai-chat x-session-id=new'])
    expect(observer.memory()).toMatchObject({ sessions: 1, rememberedBodies: 1 })
    await observer.close()
  })

  it('keep at most maxSessions, dropping the least recently active', async () => {
    const names = ['s1', 's2', 's3', 's4', 's5']
    const requests = await capture(
      'openai-chat',
      names.map((name) => [[user(`Task of ${name}`)], { headers: { 'x-session-id': name } }] as const),
    )
    const observer = new ProxyObserver({ maxSessions: 3 })
    feed(observer, requests)
    await settle(observer)
    expect(observer.snapshot().sessions.map((session) => session.key)).toEqual(
      ['s5', 's4', 's3'].map((name) => `openai-chat x-session-id=${name}`),
    )
    expect(observer.memory()).toMatchObject({ sessions: 3, rememberedBodies: 3 })
    await observer.close()
  })
})
