import {
  canonicalJson,
  createAssistantMessage,
  createMessage,
  createToolResultMessage,
  createUserMessage,
  textBlock,
  toolCallBlock,
} from '@warmfold/llm'
import type { Session } from '@warmfold/session'
import { SessionStore } from '@warmfold/session'
import type { TestContext } from '@warmfold/test-utils'
import { createTestContext } from '@warmfold/test-utils'
import { afterEach, describe, expect, it } from 'vitest'
import {
  checkCompactionEvent,
  checkpointSource,
  compactionAfterSource,
  CompactionInvariantError,
  CompactionInvariants,
} from '../src/index.ts'

const ROUTE = { provider: 'p', model: 'm' }
const contexts: TestContext[] = []

afterEach(async () => {
  for (const context of contexts.splice(0)) await context.dispose()
})

/**
 * A store-created session under the invariant checker, seeded with six surface nodes:
 * 0 user, 1 assistant calling `call-1` and `call-2`, 2 result of `call-1`, 3 result of `call-2`,
 * 4 assistant text, 5 user.
 */
async function mount(id = 's1'): Promise<{ context: TestContext; session: Session }> {
  const context = await createTestContext()
  contexts.push(context)
  context.ctx.plugin(SessionStore, {})
  context.ctx.plugin(CompactionInvariants)
  const session = await context.ctx.sessions.create(id)
  seed(session)
  return { context, session }
}

function seed(session: Session): void {
  session.append('user/message', { message: createUserMessage('read two files', 'u0') }, 'append')
  session.append(
    'assistant/message',
    {
      message: createAssistantMessage(
        [
          textBlock('reading'),
          toolCallBlock('call-1', 'read', '{"path":"a"}'),
          toolCallBlock('call-2', 'read', '{"path":"b"}'),
        ],
        ROUTE,
        'a1',
      ),
    },
    'append',
  )
  session.append('tool/result', { message: createToolResultMessage('call-1', 'A'.repeat(200), { id: 'r2' }) }, 'append')
  session.append('tool/result', { message: createToolResultMessage('call-2', 'B'.repeat(200), { id: 'r3' }) }, 'append')
  session.append(
    'assistant/message',
    { message: createAssistantMessage([textBlock('both read')], ROUTE, 'a4') },
    'append',
  )
  session.append('user/message', { message: createUserMessage('now fix it', 'u5') }, 'append')
}

/** A `compaction/audit` of `compactionId` with nothing seen (the checker reads only its id). */
const audit = (session: Session, compactionId = 'c1') =>
  session.append('compaction/audit', {
    compactionId,
    classes: {},
    dropped: [],
    droppedTotal: 0,
    previousCheckpointArtifacts: 0,
    vanishedFromPreviousCheckpoint: [],
    vanishedTotal: 0,
    health: {
      sectionsPresent: [],
      sectionsMissing: [],
      sectionsEmpty: [],
      truncated: null,
      characters: 0,
      previousCharacters: null,
      sizeRatioToPrevious: null,
    },
    trail: null,
  })

const start = (session: Session, compactionId = 'c1') =>
  session.append('compaction/start', { compactionId, turn: null, trigger: 'manual' })

function summary(
  session: Session,
  compactionId = 'c1',
  shadowedSeqs = [0, 1, 2, 3, 4],
  shadowedRange = { start: 0, end: 4 },
  carriedSeqs?: number[],
) {
  return session.append('compaction/summary', {
    compactionId,
    summary: [textBlock('Read a and b; both fine.')],
    shadowedRange,
    shadowedSeqs,
    ...(carriedSeqs ? { carriedSeqs } : {}),
    shadowedTokenCount: 120,
    provider: ROUTE.provider,
    model: ROUTE.model,
    reasoningEffort: 'high',
    maxTokens: 1024,
  })
}

function checkpoint(
  session: Session,
  compactionId = 'c1',
  range = { start: 0, end: 4 },
  sourceEventSeqs = [0, 1, 2, 3, 4],
  op: 'replace' | 'append' = 'replace',
  keep?: number[],
) {
  const message = createMessage({
    role: 'user',
    content: `<summary>${compactionId}</summary>`,
    source: checkpointSource(compactionId),
  })
  return session.append(
    'user/message',
    { message },
    op === 'append' ? 'append' : { op: 'replace', ...range, sourceEventSeqs, ...(keep ? { keep } : {}) },
  )
}

/** A message a `compaction/after` listener of `compactionId` appended. */
const afterMessage = (
  session: Session,
  compactionId = 'c1',
  intent: 'append' | { op: 'replace'; start: number; end: number; sourceEventSeqs: number[] } = 'append',
) =>
  session.append(
    'user/message',
    {
      message: createMessage({ role: 'user', content: 'Rules, re-read.', source: compactionAfterSource(compactionId) }),
    },
    intent,
  )

/** A bracket whose summary carries the user message at seq 0: it shadows 1..4 and keeps 0. */
const carrying = (session: Session) => (start(session), summary(session, 'c1', [1, 2, 3, 4], { start: 0, end: 4 }, [0]))

const end = (session: Session, compactionId = 'c1', error?: string) =>
  session.append(
    'compaction/end',
    error === undefined ? { compactionId, turn: null } : { compactionId, turn: null, error },
  )

const prune = (session: Session, shadowedSeqs = [2], shadowedRange = { start: 2, end: 2 }) =>
  session.append('compaction/prune', { shadowedRange, shadowedSeqs, shadowedTokenCount: 50 })

function prunedResult(
  session: Session,
  callId = 'call-1',
  position = 2,
  sourceEventSeqs = [2],
  op: 'replace' | 'append' = 'replace',
) {
  const message = createToolResultMessage(callId, '[pruned]')
  return session.append(
    'tool/result',
    { message },
    op === 'append' ? 'append' : { op: 'replace', start: position, end: position, sourceEventSeqs },
  )
}

const userMessage = (session: Session, text = 'more') =>
  session.append('user/message', { message: createUserMessage(text) }, 'append')

function snapshot(session: Session) {
  return { length: session.length, surface: canonicalJson(session.surface) }
}

function rejection(session: Session, act: () => unknown): CompactionInvariantError {
  const before = snapshot(session)
  let thrown: unknown
  try {
    act()
  } catch (error) {
    thrown = error
  }
  expect(snapshot(session)).toEqual(before)
  expect(
    CompactionInvariantError.isInstance(thrown),
    `expected a CompactionInvariantError, got ${String(thrown)}`,
  ).toBe(true)
  return thrown as CompactionInvariantError
}

type Case = [name: string, setup: (session: Session) => void, act: (session: Session) => unknown, rule: RegExp]

const violations: Case[] = [
  [
    'a second open bracket',
    (session) => start(session, 'c1'),
    (session) => start(session, 'c2'),
    /compaction c1 is still open; only one compaction may be open per session/,
  ],
  [
    'a summary outside a bracket',
    () => {},
    (session) => summary(session),
    /a compaction\/summary must be inside a compaction bracket/,
  ],
  [
    'a summary after its bracket ended',
    (session) => (start(session), end(session, 'c1', 'gave up')),
    (session) => summary(session),
    /must be inside a compaction bracket/,
  ],
  [
    'a summary with the wrong compactionId',
    (session) => start(session, 'c1'),
    (session) => summary(session, 'c2'),
    /it names compaction c2 but c1 is open/,
  ],
  [
    'a second summary in one bracket',
    (session) => (start(session), summary(session)),
    (session) => summary(session),
    /compaction c1 already has a summary at seq 7/,
  ],
  [
    'a summary that shadows nothing',
    (session) => start(session),
    (session) => summary(session, 'c1', [], { start: 0, end: 0 }),
    /shadowedSeqs must list at least one seq/,
  ],
  ['an end without a start', () => {}, (session) => end(session), /there is no open compaction to end/],
  [
    'an end naming another compaction',
    (session) => start(session, 'c1'),
    (session) => end(session, 'c2', 'x'),
    /it names compaction c2 but c1 is open/,
  ],
  [
    'a successful end without a summary',
    (session) => start(session),
    (session) => end(session),
    /compaction c1 ends without error but never logged a summary/,
  ],
  [
    'a checkpoint with no summary before it',
    (session) => start(session),
    (session) => checkpoint(session),
    /a checkpoint message must come immediately after its compaction\/summary/,
  ],
  [
    'a checkpoint separated from its summary by another event',
    (session) => (start(session), summary(session), userMessage(session)),
    (session) => checkpoint(session),
    /a checkpoint message must come immediately after its compaction\/summary/,
  ],
  [
    'a checkpoint of another compaction right after a summary',
    (session) => (start(session), summary(session)),
    (session) => checkpoint(session, 'c9'),
    /it names compaction c9 but the summary at seq 7 is for c1/,
  ],
  [
    'a checkpoint appended instead of replacing',
    (session) => (start(session), summary(session)),
    (session) => checkpoint(session, 'c1', undefined, undefined, 'append'),
    /a checkpoint message must replace the region it summarizes/,
  ],
  [
    'a checkpoint replace shadowing fewer seqs than priced',
    (session) => (start(session), summary(session)),
    (session) => checkpoint(session, 'c1', { start: 0, end: 3 }, [0, 1, 2, 3]),
    /the checkpoint must shadow exactly the seqs of compaction\/summary at seq 7/,
  ],
  [
    'a checkpoint replace shadowing other seqs than priced',
    (session) => (start(session), summary(session, 'c1', [0, 1, 2, 3], { start: 0, end: 3 })),
    (session) => checkpoint(session, 'c1', { start: 1, end: 4 }, [1, 2, 3, 4]),
    /the checkpoint must shadow exactly the seqs/,
  ],
  [
    'a checkpoint replace citing the priced seqs but shadowing fewer positions',
    (session) => (start(session), summary(session)),
    (session) => checkpoint(session, 'c1', { start: 0, end: 3 }, [0, 1, 2, 3, 4]),
    /the checkpoint must shadow exactly the seqs/,
  ],
  [
    'a checkpoint that keeps nothing when its summary carries a seq',
    carrying,
    (session) => checkpoint(session, 'c1', { start: 0, end: 4 }, [0, 1, 2, 3, 4]),
    /shadow exactly the seqs of compaction\/summary at seq 7 and keep exactly its carriedSeqs/,
  ],
  [
    'a checkpoint that keeps other seqs than its summary carries',
    carrying,
    (session) => checkpoint(session, 'c1', { start: 0, end: 4 }, [0, 2, 3, 4], 'replace', [1]),
    /keep exactly its carriedSeqs/,
  ],
  [
    'a checkpoint that keeps a seq its summary does not carry',
    (session) => (start(session), summary(session, 'c1', [1, 2, 3, 4], { start: 1, end: 4 })),
    (session) => checkpoint(session, 'c1', { start: 0, end: 4 }, [1, 2, 3, 4], 'replace', [0]),
    /keep exactly its carriedSeqs/,
  ],
  [
    'a compaction/after message outside any bracket',
    () => {},
    (session) => afterMessage(session),
    /inside the bracket of its compaction c1, but no compaction is open/,
  ],
  [
    'a compaction/after message of another compaction',
    (session) => start(session, 'c2'),
    (session) => afterMessage(session, 'c1'),
    /inside the bracket of its compaction c1, but c2 is open/,
  ],
  [
    'a compaction/after message before the checkpoint',
    (session) => start(session),
    (session) => afterMessage(session),
    /after the checkpoint of compaction c1, which is not logged yet/,
  ],
  [
    'a compaction/after message that replaces',
    (session) => (start(session), summary(session), checkpoint(session)),
    (session) => afterMessage(session, 'c1', { op: 'replace', start: 1, end: 1, sourceEventSeqs: [5] }),
    /a compaction\/after message must be appended, not replace anything/,
  ],
  [
    'a compaction/audit outside any bracket',
    () => {},
    (session) => audit(session),
    /must be inside the bracket of its compaction \(no compaction is open\)/,
  ],
  [
    'a compaction/audit of another compaction',
    (session) => (start(session, 'c2'), summary(session, 'c2'), checkpoint(session, 'c2')),
    (session) => audit(session, 'c1'),
    /names compaction c1 but c2 is open/,
  ],
  [
    'a compaction/audit before the checkpoint',
    (session) => (start(session), summary(session)),
    (session) => audit(session),
    /after the checkpoint of compaction c1, which is not logged yet/,
  ],
  [
    'a second compaction/audit',
    (session) => (start(session), summary(session), checkpoint(session), audit(session)),
    (session) => audit(session),
    /compaction c1 already has an audit at seq 9/,
  ],
  [
    'a compaction/prune replacement that keeps a node',
    (session) => prune(session, [2], { start: 2, end: 3 }),
    (session) =>
      session.append(
        'tool/result',
        { message: createToolResultMessage('call-1', '[pruned]') },
        { op: 'replace', start: 2, end: 3, sourceEventSeqs: [2], keep: [3] },
      ),
    /and keep none/,
  ],
  [
    'a compaction/prune followed by a user/message',
    (session) => prune(session),
    (session) => userMessage(session),
    /the compaction\/prune at seq 6 must be followed immediately by its tool\/result replacement/,
  ],
  [
    'a compaction/prune followed by an appended tool/result',
    (session) => prune(session),
    (session) => prunedResult(session, 'call-1', 2, [2], 'append'),
    /must be followed immediately by its tool\/result replacement/,
  ],
  [
    'a compaction/prune followed by a second prune',
    (session) => prune(session),
    (session) => prune(session, [3], { start: 3, end: 3 }),
    /must be followed immediately by its tool\/result replacement/,
  ],
  [
    'a prune replacement of another result than priced',
    (session) => prune(session, [2]),
    (session) => prunedResult(session, 'call-2', 3, [3]),
    /the replacement must shadow exactly the seqs priced by compaction\/prune at seq 6 \(2\)/,
  ],
  [
    'a tool/result replace without its pricing event',
    () => {},
    (session) => prunedResult(session),
    /a tool\/result replacement must come immediately after its compaction\/prune pricing event/,
  ],
  [
    'a tool/result replace one event after its pricing event',
    (session) => (prune(session), prunedResult(session)),
    (session) => prunedResult(session, 'call-2', 3, [3]),
    /a tool\/result replacement must come immediately after its compaction\/prune pricing event/,
  ],
]

describe('CompactionInvariants', () => {
  it.each(violations)('rejects %s and leaves the log unchanged', async (_name, setup, act, rule) => {
    const { context, session } = await mount()
    setup(session)
    const error = rejection(session, () => act(session))
    expect(error.name).toBe('CompactionInvariantError')
    expect(error.message).toMatch(/^compaction invariant: \S+ at seq \d+ rejected: /)
    expect(error.message).toMatch(rule)
    context.assertClean()
  })

  it('accepts a full transaction: start, summary, checkpoint replace, end', async () => {
    const { context, session } = await mount()
    const opened = start(session)
    const priced = summary(session)
    const committed = checkpoint(session)
    const closed = end(session)
    expect([opened.seq, priced.seq, committed.seq, closed.seq]).toEqual([6, 7, 8, 9])
    expect(session.surface.nodes).toEqual([8, 5])
    // The bracket is closed: the next compaction may start.
    start(session, 'c2')
    context.assertClean()
  })

  it('accepts a checkpoint that keeps exactly its carried seqs, then compaction/after messages, in one bracket', async () => {
    const { context, session } = await mount()
    carrying(session)
    const committed = checkpoint(session, 'c1', { start: 0, end: 4 }, [1, 2, 3, 4], 'replace', [0])
    const appended = afterMessage(session)
    const again = afterMessage(session)
    audit(session)
    end(session)
    expect(session.surface.nodes).toEqual([committed.seq, 0, 5, appended.seq, again.seq])
    // The next compaction may carry the same seq again.
    start(session, 'c2')
    summary(session, 'c2', [committed.seq, 5], { start: 0, end: 2 }, [0])
    const next = checkpoint(session, 'c2', { start: 0, end: 2 }, [committed.seq, 5], 'replace', [0])
    end(session, 'c2')
    expect(session.surface.nodes).toEqual([next.seq, 0, appended.seq, again.seq])
    // After its bracket closed, a compaction/after message of it is refused.
    rejection(session, () => afterMessage(session, 'c2'))
    context.assertClean()
  })

  it('accepts an end with an error and no summary, and a failed commit after a summary', async () => {
    const { context, session } = await mount()
    start(session)
    end(session, 'c1', 'the summary call failed')
    start(session, 'c2')
    summary(session, 'c2')
    end(session, 'c2', 'the surface changed while summarizing')
    expect(session.surface.nodes).toEqual([0, 1, 2, 3, 4, 5])
    session.append('compaction/failure', {
      trigger: 'pressure',
      reason: 'the tail alone is above the threshold',
      totalTokens: 9000,
      thresholdTokens: 8000,
    })
    context.assertClean()
  })

  it('accepts a valid prune pair, and ordinary appends after it', async () => {
    const { context, session } = await mount()
    prune(session, [2])
    const first = prunedResult(session, 'call-1', 2, [2])
    expect(session.surface.nodes).toEqual([0, 1, first.seq, 3, 4, 5])
    userMessage(session)
    prune(session, [3], { start: 3, end: 3 })
    const second = prunedResult(session, 'call-2', 3, [3])
    expect(session.surface.nodes).toEqual([0, 1, first.seq, second.seq, 4, 5, 8])
    userMessage(session)
    context.assertClean()
  })

  it('accepts a prune, its replacement and a checkpoint of the pruned region in one bracket', async () => {
    const { context, session } = await mount()
    start(session)
    prune(session, [3], { start: 3, end: 3 })
    const pruned = prunedResult(session, 'call-2', 3, [3])
    const region = [0, 1, 2, pruned.seq]
    summary(session, 'c1', region, { start: 0, end: 3 })
    const committed = checkpoint(session, 'c1', { start: 0, end: 3 }, region)
    end(session)
    expect(session.surface.nodes).toEqual([committed.seq, 4, 5])
    context.assertClean()
  })

  it('rebuilds the open bracket when a session is reopened from the store', async () => {
    const { context, session } = await mount('reopened')
    start(session, 'c1')
    await context.ctx.sessions.close(session)
    const reopened = await context.ctx.sessions.open('reopened')
    expect(reopened).not.toBe(session)
    expect(reopened.length).toBe(7)
    const error = rejection(reopened, () => start(reopened, 'c2'))
    expect(error.message).toMatch(/compaction c1 is still open/)
    // The stale bracket can be closed with an error, after which compaction works again.
    end(reopened, 'c1', 'interrupted')
    start(reopened, 'c2')
    context.assertClean()
  })

  it('rebuilds adjacency state on reopen: a trailing summary still expects its checkpoint', async () => {
    const { context, session } = await mount('trailing')
    start(session)
    summary(session)
    await context.ctx.sessions.close(session)
    const reopened = await context.ctx.sessions.open('trailing')
    rejection(reopened, () => checkpoint(reopened, 'c1', { start: 0, end: 3 }, [0, 1, 2, 3]))
    checkpoint(reopened)
    end(reopened)
    context.assertClean()
  })

  it('does not count an event that a later validator rejected', async () => {
    const { context, session } = await mount()
    let refuse = true
    session.addValidator((candidate) => {
      if (refuse && candidate.type === 'compaction/start') throw new Error('not now')
    })
    expect(() => start(session, 'c1')).toThrow('not now')
    expect(session.length).toBe(6)
    refuse = false
    // Had the checker counted the rejected start, c1 would look open and this would be refused.
    start(session, 'c1')
    summary(session)
    checkpoint(session)
    end(session)
    context.assertClean()
  })

  it('stops checking when the plugin is disposed', async () => {
    const context = await createTestContext()
    contexts.push(context)
    context.ctx.plugin(SessionStore, {})
    const fork = context.ctx.plugin(CompactionInvariants)
    const session = await context.ctx.sessions.create('unchecked')
    seed(session)
    expect(() => end(session)).toThrow(/no open compaction/)
    fork.dispose()
    end(session)
    expect(session.length).toBe(7)
    context.assertClean()
  })

  it('checks only sessions the store opens after it is mounted', async () => {
    const context = await createTestContext()
    contexts.push(context)
    context.ctx.plugin(SessionStore, {})
    const before = await context.ctx.sessions.create('before')
    context.ctx.plugin(CompactionInvariants)
    const after = await context.ctx.sessions.create('after')
    end(before, 'c1')
    expect(() => end(after, 'c1')).toThrow(/no open compaction/)
    context.assertClean()
  })
})

describe('checkCompactionEvent', () => {
  it('is a pure fold over events, usable without cordis', () => {
    const events = [
      { seq: 0, type: 'compaction/start', data: { compactionId: 'c1', turn: 3, trigger: 'pressure' } },
      { seq: 1, type: 'compaction/summary', data: { compactionId: 'c1', shadowedSeqs: [7] } },
    ]
    const state = events.reduce(checkCompactionEvent, {})
    expect(state).toEqual({
      open: { compactionId: 'c1', summarySeq: 1 },
      previous: { seq: 1, type: 'compaction/summary', data: events[1]!.data },
    })
    const candidate = { seq: 2, type: 'compaction/end', data: { compactionId: 'c1', turn: 3 } }
    expect(checkCompactionEvent(state, candidate)).toEqual({ open: undefined, previous: candidate })
    expect(state.open).toEqual({ compactionId: 'c1', summarySeq: 1 })
    expect(() => checkCompactionEvent({}, candidate)).toThrow(
      'compaction invariant: compaction/end at seq 2 rejected: there is no open compaction to end',
    )
  })
})
