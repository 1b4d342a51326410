import { describe, expect, it } from 'vitest'
import { afterFoldBehaviour } from '../src/index.ts'
import { assistant, call, calls, logOf, result, user } from './log-fixture.ts'

// Before the fold: 4 read-only calls, one of which repeats an earlier one (baseline 1/4).
const FOLDED = logOf([
  user('Fix the parser.'),
  call('r1', 'read_file', { path: 'src/parser.ts' }),
  result('r1', 'parser source'),
  call('r2', 'grep', { pattern: 'tokenize', path: 'src' }),
  result('r2', 'src/lexer.ts:3'),
  call('r3', 'read_file', { path: 'src/lexer.ts' }),
  result('r3', 'lexer source'),
  call('r4', 'read_file', { path: 'src/parser.ts' }),
  result('r4', 'parser source'),
  call('w1', 'bash', { command: 'pnpm test' }),
  result('w1', '1 failed', true),
])
const RETAINED = logOf([call('r5', 'read_file', { path: 'src/lexer.ts' }), result('r5', 'lexer source')], 20)

describe('afterFoldBehaviour', () => {
  it('counts re-work: read-only calls repeating one the folded region held (arguments compared as canonical JSON) and no retained message holds, net of the baseline', () => {
    const after = logOf(
      [
        // Same call, keys in another order and other spacing: a repeat.
        call('a1', 'read_file', '{ "path" : "src/parser.ts" }'),
        result('a1', 'parser source'),
        // Held by the retained tail too: not re-work.
        call('a2', 'read_file', { path: 'src/lexer.ts' }),
        result('a2', 'lexer source'),
        // New reads.
        calls(['a3', 'read_file', { path: 'src/ast.ts' }], ['a4', 'grep', { path: 'src', pattern: 'tokenize' }]),
        result('a3', 'ast source'),
        result('a4', 'src/lexer.ts:3'),
        call('a5', 'edit_file', { path: 'src/parser.ts' }),
        result('a5', 'ok'),
      ],
      30,
    )
    const behaviour = afterFoldBehaviour({ folded: FOLDED, retained: RETAINED, after })
    expect(behaviour.repeatedReads).toEqual([
      { seq: 30, name: 'read_file', arguments: '{ "path" : "src/parser.ts" }', foldedSeq: 7 },
      { seq: 34, name: 'grep', arguments: '{"path":"src","pattern":"tokenize"}', foldedSeq: 3 },
    ])
    expect(behaviour.readCalls).toBe(4)
    expect(behaviour.repeatRate).toBe(0.5)
    expect(behaviour.baselineRepeatRate).toBe(0.25)
    expect(behaviour.netReworkRate).toBe(0.25)
    expect(behaviour.netReworkCalls).toBe(1)
    expect(behaviour.stepsToFirstWrite).toBe(4)
    expect(behaviour.stepsObserved).toBe(4)
    expect(behaviour.loops).toEqual([])
  })

  it('finds identical call and result loops in the window, most repeated first', () => {
    const after = logOf(
      [
        call('a', 'bash', { command: 'pnpm test' }),
        result('a', '1 failed', true),
        call('b', 'bash', { command: 'pnpm test' }),
        result('b', '1 failed', true),
        call('c', 'read_file', { path: 'x.ts' }),
        result('c', 'same'),
        call('d', 'bash', { command: 'pnpm test' }),
        result('d', '1 failed', true),
        call('e', 'read_file', { path: 'x.ts' }),
        result('e', 'same'),
        // Same call, another result: progress, not a loop.
        call('f', 'bash', { command: 'pnpm test' }),
        result('f', 'all passed'),
      ],
      50,
    )
    const behaviour = afterFoldBehaviour({ folded: FOLDED, after })
    expect(behaviour.loops).toEqual([
      { name: 'bash', arguments: '{"command":"pnpm test"}', count: 3, seqs: [50, 52, 56] },
      { name: 'read_file', arguments: '{"path":"x.ts"}', count: 2, seqs: [54, 58] },
    ])
    expect(behaviour.stepsToFirstWrite).toBe(1)
  })

  it('looks at the first N steps for re-work and loops, at every step for the first write, and honours declared tool kinds', () => {
    const after = logOf(
      [
        call('a', 'read_file', { path: 'src/parser.ts' }),
        result('a', 'x'),
        assistant('thinking aloud'),
        call('b', 'read_file', { path: 'src/lexer.ts' }),
        result('b', 'x'),
        call('c', 'bash', { command: 'cat src/parser.ts' }),
        result('c', 'x'),
      ],
      40,
    )
    const behaviour = afterFoldBehaviour({ folded: FOLDED, after, windowSteps: 2 })
    expect(behaviour.stepsObserved).toBe(2)
    expect(behaviour.repeatedReads.map((repeat) => repeat.seq)).toEqual([40])
    expect(behaviour.stepsToFirstWrite).toBe(4)
    const declared = afterFoldBehaviour({ folded: FOLDED, after, toolKinds: { bash: 'read' } })
    expect(declared.stepsToFirstWrite).toBeNull()
    expect(declared.readCalls).toBe(3)
  })

  it('uses the whole history before the fold for the baseline when given, and reports null without reads', () => {
    const before = logOf([
      call('x', 'read_file', { path: 'a' }),
      result('x', 'a'),
      call('y', 'read_file', { path: 'a' }),
      result('y', 'a'),
    ])
    expect(afterFoldBehaviour({ folded: logOf([user('hi')]), beforeFold: before, after: [] }).baselineRepeatRate).toBe(
      0.5,
    )
    const empty = afterFoldBehaviour({
      folded: logOf([user('hi')]),
      after: logOf([call('z', 'read_file', { path: 'a' })], 5),
    })
    expect(empty.baselineRepeatRate).toBeNull()
    expect(empty.netReworkRate).toBe(0)
    expect(JSON.parse(JSON.stringify(empty))).toEqual(empty)
  })

  it('refuses input of the wrong shape, naming it', () => {
    expect(() => afterFoldBehaviour({ folded: FOLDED, after: 'x' as never })).toThrow(
      'afterFoldBehaviour: after must be an array of { seq, message }, got string',
    )
    expect(() => afterFoldBehaviour({ folded: FOLDED, after: [], windowSteps: 0 })).toThrow(
      'afterFoldBehaviour: windowSteps must be a positive integer, got 0',
    )
    expect(() =>
      afterFoldBehaviour({
        folded: [
          { seq: 1, message: user('a') },
          { seq: 0, message: user('b') },
        ],
        after: [],
      }),
    ).toThrow(
      'afterFoldBehaviour: folded[1].seq 0 must be greater than the seq before it (1): pass messages in log order',
    )
  })
})
