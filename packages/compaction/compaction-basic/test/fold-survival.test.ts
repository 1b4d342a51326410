import { pinMessage, pinnedSeqs } from '@warmfold/compaction'
import {
  canonicalJson,
  createAssistantMessage,
  createToolResultMessage,
  createUserMessage,
  textBlock,
  toolCallBlock,
} from '@warmfold/llm'
import { Session } from '@warmfold/session'
import { afterEach, describe, expect, it } from 'vitest'
import { planFoldCarry } from '../src/fold/fold-carry.ts'
import type { EngineHarness, EngineHarnessOptions } from './engine-fixture.ts'
import { filler, mountEngine, ROUTE, stopAfter } from './engine-fixture.ts'
import {
  bytesOf,
  folds,
  foldThreeTimes,
  isCheckpoint,
  loggedMessage,
  recordConversation,
  requestAfter,
  requestsOf,
} from './fold-survival-fixture.ts'

const harnesses: EngineHarness[] = []
afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.dispose()
})

async function harness(options: EngineHarnessOptions): Promise<EngineHarness> {
  const created = await mountEngine(options)
  harnesses.push(created)
  return created
}

describe('what survives a fold', () => {
  it('carries pinned and kept user messages after the checkpoint through three folds, in order, byte for byte', async () => {
    const script = requestsOf(8)
    // A budget every request message of this session fits: none of them is ever summarized away.
    const engine = await harness({
      engine: { keepUserMessages: { maxTokens: 2000 } },
      conversation: (request, index) => script.reply(request, index),
    })
    const { session, sent, pinned, requests } = await foldThreeTimes(engine, script, 'survive')
    const commits = folds(session)
    expect(commits.length).toBeGreaterThanOrEqual(3)

    // Every user request the host sent is on the surface now, verbatim: carried or in the tail.
    const surfaceIds = session.deriveMessages().map((message) => message.id)
    for (const request of requests) expect(surfaceIds, request.id).toContain(request.id)

    for (const [index, commit] of commits.entries()) {
      const carried = commit.data.carriedSeqs ?? []
      // The pins come first in the log, so first after the checkpoint, in their original order.
      expect(carried.slice(0, 3), `fold ${index}`).toEqual(pinned)
      // The rest are the user requests that fell into the region, oldest first.
      const kept = carried.slice(3)
      expect(kept.length, `fold ${index} keeps user requests`).toBeGreaterThan(0)
      for (const seq of kept) expect(loggedMessage(session, seq).source).toEqual({ kind: 'user' })
      expect(carried.toSorted((left, right) => left - right)).toEqual(carried)
      if (index > 0) {
        // What an earlier fold carried, the next one carries again: the same log events.
        for (const seq of commits[index - 1]!.data.carriedSeqs!) expect(carried).toContain(seq)
      }

      // The next conversation request: checkpoint, then the carried messages byte for byte, then the tail.
      const checkpoint = session.events[commit.seq + 1]!
      const next = requestAfter(sent, checkpoint.seq + 1)
      expect(isCheckpoint(next.messages[0]!)).toBe(true)
      const afterCheckpoint = next.messages.slice(1, 1 + carried.length).map(bytesOf)
      expect(afterCheckpoint).toEqual(carried.map((seq) => bytesOf(loggedMessage(session, seq))))
    }
    // After the third fold the first request of the session still opens the carried list, unchanged.
    const last = commits.at(-1)!
    const final = requestAfter(sent, last.seq + 2)
    expect(bytesOf(final.messages[1]!)).toBe(bytesOf(requests[0]!))
    expect(canonicalJson(final.messages[1]!.content)).toBe(canonicalJson(requests[0]!.content))
    engine.assertClean()
  })

  it("with the default config every fold keeps the user's first instruction verbatim after its checkpoint", async () => {
    // One long turn of tool steps on the 8000-token window: the task is only ever in the first message.
    const engine = await harness({ engineDefaults: true, conversation: stopAfter(60) })
    const agent = await engine.ctx.agentLoop.create('task', { ...ROUTE, system: 'You are a coding agent.' })
    const sent = recordConversation(engine, agent.session)
    const task = createUserMessage('Migrate every module of src/ to the new logger; keep the public API.', 'task')
    agent.followup(task)
    await agent.whenIdle()
    const session = agent.session
    expect(session.events.at(-1)?.data).toMatchObject({ reason: 'stop', steps: 61 })
    const commits = folds(session)
    expect(commits.length).toBeGreaterThanOrEqual(2)
    const taskSeq = session.events.find((event) => event.type === 'user/message')!.seq
    for (const commit of commits) {
      expect(commit.data.carriedSeqs).toEqual([taskSeq])
      // The request after the fold: the checkpoint, then the task byte for byte.
      const next = requestAfter(sent, commit.seq + 2)
      expect(isCheckpoint(next.messages[0]!)).toBe(true)
      expect(bytesOf(next.messages[1]!)).toBe(bytesOf(task))
    }
    // The last request of the turn still carries it.
    expect(sent.at(-1)!.request.messages.map(bytesOf)).toContain(bytesOf(task))
    engine.assertClean()
  })

  it('keeps the task when later instructions alone would fill the default budget, and the newest of them after it', async () => {
    const script = requestsOf(3)
    const engine = await harness({
      engineDefaults: true,
      conversation: (request, index) => script.reply(request, index),
    })
    const agent = await engine.ctx.agentLoop.create('task-budget', { ...ROUTE, system: 'You are a coding agent.' })
    const task = createUserMessage('Migrate every module of src/ to the new logger; keep the public API.', 'task')
    script.next()
    agent.followup(task)
    await agent.whenIdle()
    // Instructions of about 100 tokens each: the default budget at 8000 tokens (400) holds three besides the task.
    for (let turn = 1; folds(agent.session).length < 2; turn++) {
      if (turn > 30) throw new Error('fewer than 2 folds after 30 requests')
      script.next()
      agent.followup(`Request ${turn}: also migrate module ${turn}. ${filler(turn, 380)}`)
      await agent.whenIdle()
    }
    const session = agent.session
    const meter = engine.ctx.tokenMeter
    for (const commit of folds(session)) {
      const carried = commit.data.carriedSeqs!
      expect(loggedMessage(session, carried[0]!).id).toBe(task.id)
      expect(carried.length).toBeGreaterThan(1)
      expect(carried.reduce((sum, seq) => sum + meter.priceOf(session, seq), 0)).toBeLessThanOrEqual(400)
      // Besides the task, the newest run: no shadowed instruction is newer than a kept one.
      const shadowed = commit.data.shadowedSeqs.filter((seq) => loggedMessage(session, seq).source.kind === 'user')
      expect(shadowed.length).toBeGreaterThan(0)
      expect(Math.max(...shadowed)).toBeLessThan(Math.min(...carried.slice(1)))
    }
    engine.assertClean()
  })

  it('keeps only the newest user messages that fit the budget, and summarizes every older one', async () => {
    // Short requests, so the first fold's region holds several of them (about 20 tokens each).
    const script = requestsOf(2)
    const engine = await harness({
      engine: { keepUserMessages: { maxTokens: 50 } },
      conversation: (request, index) => script.reply(request, index),
    })
    const { session, pinned } = await foldThreeTimes(engine, script, 'budget', 1)
    const [commit] = folds(session)
    const kept = commit!.data.carriedSeqs!.filter((seq) => !pinned.includes(seq))
    const keptTokens = kept.reduce((sum, seq) => sum + engine.ctx.tokenMeter.priceOf(session, seq), 0)
    expect(kept.length).toBeGreaterThan(0)
    expect(keptTokens).toBeLessThanOrEqual(50)
    // The user requests of the region older than the kept ones were summarized, and the newest
    // of them would not have fit.
    const shadowedRequests = commit!.data.shadowedSeqs.filter(
      (seq) => loggedMessage(session, seq).source.kind === 'user',
    )
    expect(shadowedRequests.length).toBeGreaterThan(0)
    expect(Math.max(...shadowedRequests)).toBeLessThan(Math.min(...kept))
    expect(keptTokens + engine.ctx.tokenMeter.priceOf(session, Math.max(...shadowedRequests))).toBeGreaterThan(50)
    engine.assertClean()
  })

  it('keeps no user message with keepUserMessages false, and still carries the pins', async () => {
    const script = requestsOf(8)
    const engine = await harness({
      engine: { keepUserMessages: false },
      conversation: (request, index) => script.reply(request, index),
    })
    const { session, pinned } = await foldThreeTimes(engine, script, 'pins-only', 2)
    for (const commit of folds(session)) expect(commit.data.carriedSeqs).toEqual(pinned)
    engine.assertClean()
  })

  it('counts pinned tokens against the retained tail, so pins and tail together stay near the retain budget', async () => {
    const script = requestsOf(8)
    // Summaries on the 32000-token model: the head is never cut short by the summary budget. A
    // fold at the threshold (a background fold keeps what arrived while it ran on top).
    const engine = await harness({
      engine: { summarizationProvider: 'scripted', summarizationModel: 'other', background: { enabled: false } },
      conversation: (request, index) => script.reply(request, index),
    })
    // Rules of about 900 tokens: with the pinned result, most of the 1280-token retain budget.
    const rules = createUserMessage(`Project rules. ${filler(11, 3600)}`, 'big-rules')
    const { session, sent, pinned } = await foldThreeTimes(engine, script, 'retain', 1, rules)
    const [commit] = folds(session)
    const next = requestAfter(sent, commit!.seq + 2)
    const meter = engine.ctx.tokenMeter
    const pinnedTokens = next.messages
      .slice(1, 1 + pinned.length)
      .reduce((sum, message) => sum + meter.estimateMessage(message), 0)
    const tail = next.messages.slice(1 + pinned.length).map((message) => meter.estimateMessage(message))
    const tailTokens = tail.reduce((sum, tokens) => sum + tokens, 0)
    // The default retain budget is 0.16 × 8000 = 1280 tokens, for pins and tail together: the
    // walk back stops once they reach it (its last node may overshoot, and the balanced cut may
    // take one node more). Counting the tail alone, it would keep at least 1280 tokens of tail.
    expect(pinnedTokens).toBeGreaterThan(1100)
    expect(pinnedTokens + tailTokens - tail[0]! - tail[1]!).toBeLessThan(1280)
    expect(tailTokens).toBeLessThan(1280 / 2)
    engine.assertClean()
  })

  it('plans the carry of a region: pins with their tool exchange, never a leading checkpoint', async () => {
    const script = requestsOf(3)
    const engine = await harness({
      engine: { auto: false },
      conversation: (request, index) => script.reply(request, index),
    })
    const agent = await engine.ctx.agentLoop.create('plan', { provider: 'scripted', model: 'main' })
    agent.followup('Read three files.')
    await agent.whenIdle()
    const session = agent.session
    const nodes = session.surface.nodes
    // user, (assistant call, result) × 3, answer
    const result = nodes[4]!
    pinMessage(session, result)
    const price = (position: number) => engine.ctx.tokenMeter.priceOf(session, nodes[position]!)
    const carry = planFoldCarry(session, { start: 0, end: 6 }, price)
    expect(carry.carriedSeqs).toEqual([nodes[3], nodes[4]])
    expect(carry.shadowedSeqs).toEqual([nodes[0], nodes[1], nodes[2], nodes[5], nodes[6]])
    expect(carry.foldsHistory).toBe(true)
    expect(carry.carriedTokens + carry.shadowedTokens).toBe(
      nodes.slice(0, 7).reduce((sum, _seq, position) => sum + price(position), 0),
    )
    // Pinning the call brings its result too; a region of pins alone folds nothing.
    const exchange = planFoldCarry(session, { start: 3, end: 4 }, price)
    expect(exchange).toMatchObject({ carriedSeqs: [nodes[3], nodes[4]], shadowedSeqs: [], foldsHistory: false })
    expect([...pinnedSeqs(session)]).toEqual([result])
    engine.assertClean()
  })

  it('pairs a pinned result with the nearest earlier call of its id, when a server reuses call ids', () => {
    const session = new Session('reused-ids')
    const route = { provider: 'p', model: 'm' }
    session.append('user/message', { message: createUserMessage('Read twice.') }, 'append')
    for (const text of ['first', 'second']) {
      session.append(
        'assistant/message',
        { message: createAssistantMessage([toolCallBlock('call_0', 'read', `{"path":"${text}"}`)], route) },
        'append',
      )
      session.append('tool/result', { message: createToolResultMessage('call_0', `${text} file`) }, 'append')
    }
    session.append('assistant/message', { message: createAssistantMessage([textBlock('Both read.')], route) }, 'append')
    pinMessage(session, 4)
    const carry = planFoldCarry(session, { start: 0, end: 5 }, () => 10)
    expect(carry.carriedSeqs).toEqual([3, 4])
    expect(carry.shadowedSeqs).toEqual([0, 1, 2, 5])
  })

  it('keeps user messages of at most half the region, so a session of user messages alone still shrinks', () => {
    // An overflow fold where the server's real window is far below the declared one: every node is
    // a user message and the budget would carry them all (the real-cache overflow proof folded nothing).
    const session = new Session('users-only')
    for (let turn = 0; turn < 10; turn++)
      session.append('user/message', { message: createUserMessage(`turn ${turn}`) }, 'append')
    const carry = planFoldCarry(session, { start: 0, end: 9 }, () => 90, { maxTokens: 800 })
    // Half of 900 tokens: the task and the newest four, 450 tokens; the other five are summarized.
    expect(carry.carriedSeqs).toEqual([0, 6, 7, 8, 9])
    expect(carry.shadowedTokens).toBe(450)
    expect(carry.foldsHistory).toBe(true)
  })

  it('carries a pinned assistant message with the results of every call it made, so no call loses its result', async () => {
    // The first reply calls two tools at once; the host pins that reply.
    let calls = 0
    const engine = await harness({
      conversation: (_request, index) =>
        index === 0
          ? {
              content: [
                textBlock('Reading both.'),
                toolCallBlock('call-a', 'read', '{"path":"a.ts"}'),
                toolCallBlock('call-b', 'read', '{"path":"b.ts"}'),
              ],
            }
          : index % 2 === 1
            ? { content: `Done with ${index}. ${filler(index, 40)}` }
            : {
                content: [
                  textBlock(`Step ${index}. ${filler(index, 60)}`),
                  toolCallBlock(`call-${calls++}`, 'read', `{"path":"src/${index}.ts"}`),
                ],
              },
    })
    const agent = await engine.ctx.agentLoop.create('pinned-call', { provider: 'scripted', model: 'main' })
    const sent = recordConversation(engine, agent.session)
    await agent.followup('Read a and b.')
    const session = agent.session
    const reply = session.events.find((event) => event.type === 'assistant/message')!
    const results = session.events
      .filter((event) => event.type === 'tool/result')
      .slice(0, 2)
      .map((event) => event.seq)
    pinMessage(session, reply.seq)
    for (let turn = 0; folds(session).length === 0; turn++) {
      if (turn > 40) throw new Error('no fold after 40 turns')
      await agent.followup(`Go on (${turn}).`)
    }
    const [commit] = folds(session)
    expect(commit!.data.carriedSeqs).toEqual([reply.seq, ...results])
    // The next request has the call and both results right after the checkpoint, in order.
    const next = requestAfter(sent, commit!.seq + 2)
    expect(next.messages.slice(1, 4).map(bytesOf)).toEqual(
      [reply.seq, ...results].map((seq) => bytesOf(loggedMessage(session, seq))),
    )
    engine.assertClean()
  })

  it("keeps the user's task first, then only the newest run that fits: a newest message over the rest of the budget ends the walk", () => {
    const session = new Session('over-budget')
    const route = { provider: 'p', model: 'm' }
    session.append('user/message', { message: createUserMessage('Small request one.') }, 'append')
    session.append('assistant/message', { message: createAssistantMessage([textBlock('Done.')], route) }, 'append')
    session.append('user/message', { message: createUserMessage('Small request two.') }, 'append')
    session.append('assistant/message', { message: createAssistantMessage([textBlock('Done.')], route) }, 'append')
    session.append('user/message', { message: createUserMessage(`A long request. ${filler(3, 2000)}`) }, 'append')
    session.append('assistant/message', { message: createAssistantMessage([textBlock('Done.')], route) }, 'append')
    // The last answer is long, so half the region (the most kept messages may take) never binds here.
    const prices = [10, 5, 10, 5, 500, 1000]
    const plan = (maxTokens: number, start = 0) =>
      planFoldCarry(session, { start, end: 5 }, (position) => prices[position]!, { maxTokens }).carriedSeqs
    // The task (the first request) fits; the newest does not fit the rest, so the walk ends there.
    expect(plan(100)).toEqual([0])
    // The task alone over the budget is not kept; nor is anything older than a newest one that does not fit.
    expect(plan(9)).toEqual([])
    // Under a budget the newest fits, the older ones follow it while they fit, after the task.
    expect(plan(510)).toEqual([0, 4])
    expect(plan(520)).toEqual([0, 2, 4])
    // A region without the task keeps only the newest run.
    expect(plan(515, 1)).toEqual([2, 4])
  })

  it("keeps user messages by the conversation's policy, not by the policy of a summarization model that has its own", async () => {
    const script = requestsOf(2)
    const engine = await harness({
      engine: {
        keepUserMessages: { maxTokens: 2000 },
        summarizationProvider: 'scripted',
        summarizationModel: 'other',
        modelPolicies: [{ provider: 'scripted', model: 'other', keepUserMessages: { maxTokens: 1 } }],
      },
      conversation: (request, index) => script.reply(request, index),
    })
    const { session, pinned } = await foldThreeTimes(engine, script, 'routed', 1)
    const [commit] = folds(session)
    const kept = commit!.data.carriedSeqs!.filter((seq) => !pinned.includes(seq))
    expect(kept.length).toBeGreaterThan(0)
    for (const seq of kept) expect(loggedMessage(session, seq).source).toEqual({ kind: 'user' })
    engine.assertClean()
  })
})
