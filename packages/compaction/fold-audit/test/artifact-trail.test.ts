import { describe, expect, it } from 'vitest'
import { buildArtifactTrail, extractArtifacts } from '../src/index.ts'
import { occursAsWord } from '../src/occurs-as-word.ts'
import { call, logOf, result, user } from './log-fixture.ts'

const REGION = logOf([
  user('Make checkout retries configurable. Do not change src/api/public.ts, and use pnpm.'),
  call('a', 'read_file', { path: 'src/checkout/pay.ts' }),
  result('a', 'export const RETRY_MS = 250'),
  call('b', 'edit_file', { path: 'src/checkout/pay.ts', old_string: '250', new_string: 'config.retryMs' }),
  result('b', 'ok'),
  call('c', 'bash', { command: 'pnpm vitest run test/pay.test.ts' }),
  result('c', ' FAIL  test/pay.test.ts > retries\nError: config is not defined\nExit code: 1', true),
  call('d', 'bash', { command: 'pnpm tsc --noEmit' }),
  result('d', 'src/checkout/pay.ts(1,24): error TS2304: Cannot find name `config`.', true),
  call('e', 'bash', { command: 'pnpm tsc --noEmit' }),
  result('e', ''),
  call('f', 'grep', { pattern: 'retryMs', path: 'src' }),
  result('f', 'src/config.ts:3:  retryMs: number'),
  user('Actually, keep the default at 250 ms.'),
])

/** A token estimate of one token per line. */
const lines = (text: string): number => text.split('\n').length

describe('buildArtifactTrail', () => {
  it('writes files changed and read, commands with their last status, open problems and the user constraints, in this exact format', () => {
    const trail = buildArtifactTrail(extractArtifacts(REGION))
    expect(trail.text).toBe(
      [
        '## Artifact Trail',
        "(recorded from the tool calls and the user's messages by warmfold, not summarized)",
        '### Files changed',
        '- `src/checkout/pay.ts` (edit_file)',
        '### Files read',
        '- `src` (grep)',
        '### Other paths named',
        '- `src/config.ts`',
        '### Commands run',
        '- `pnpm vitest run test/pay.test.ts` → exit 1',
        '- `pnpm tsc --noEmit` → ok (2 runs)',
        '### Open problems',
        '- `pnpm vitest run test/pay.test.ts`:',
        '  - FAIL test/pay.test.ts > retries',
        '  - Error: config is not defined',
        '### User constraints and corrections',
        '- Do not change src/api/public.ts, and use pnpm',
        '- Actually, keep the default at 250 ms',
      ].join('\n'),
    )
    expect(trail.tokens).toBe(Math.ceil(trail.text.length / 4))
    expect(trail.kept).toEqual({
      filesChanged: 1,
      filesRead: 1,
      otherPaths: 1,
      commands: 2,
      openProblems: 1,
      userConstraints: 2,
      hostEntries: 0,
    })
    expect(trail.cut).toEqual({
      filesChanged: 0,
      filesRead: 0,
      otherPaths: 0,
      commands: 0,
      openProblems: 0,
      userConstraints: 0,
      hostEntries: 0,
    })
  })

  it('leaves out files read first, then commands, files changed, problems, and the user last, and says what it left out', () => {
    const extraction = extractArtifacts(REGION)
    const full = buildArtifactTrail(extraction)
    const totals = full.kept
    const tiers = ['otherPaths', 'filesRead', 'commands', 'filesChanged', 'openProblems', 'userConstraints'] as const
    let previous = full.cut
    for (let budget = full.tokens; budget >= 1; budget--) {
      const trail = buildArtifactTrail(extraction, { maxTokens: budget })
      expect(trail.tokens).toBeLessThanOrEqual(budget)
      for (const [tier, section] of tiers.entries()) {
        // A smaller budget never brings an item back.
        expect(trail.cut[section]).toBeGreaterThanOrEqual(previous[section])
        expect(trail.kept[section] + trail.cut[section]).toBe(totals[section])
        // A section loses items only once every section before it in the cut order is empty.
        if (trail.cut[section] > 0)
          for (const earlier of tiers.slice(0, tier))
            expect(trail.cut[earlier], `${earlier} before ${section} at ${budget}`).toBe(totals[earlier])
      }
      // Cut or not, the trail says so: it ends with the note exactly when something was left out.
      const anyCut = Object.values(trail.cut).some((count) => count > 0)
      if (trail.text !== '') expect(trail.text.includes('\n(left out for space: '), `budget ${budget}`).toBe(anyCut)
      if (budget === full.tokens) expect(trail).toEqual(full)
      previous = trail.cut
    }
  })

  it('leaves out the least referenced item of a section first, and names what it left out', () => {
    const extraction = extractArtifacts(REGION)
    let budget = buildArtifactTrail(extraction).tokens
    while (buildArtifactTrail(extraction, { maxTokens: budget }).cut.commands === 0) budget--
    const trail = buildArtifactTrail(extraction, { maxTokens: budget })
    expect(trail.cut).toEqual({
      filesChanged: 0,
      filesRead: 1,
      otherPaths: 1,
      commands: 1,
      openProblems: 0,
      userConstraints: 0,
      hostEntries: 0,
    })
    // The command run once goes before the one run twice.
    expect(trail.text).toContain('- `pnpm tsc --noEmit` → ok (2 runs)')
    expect(trail.text).not.toContain('- `pnpm vitest run test/pay.test.ts` → exit 1')
    expect(trail.text.endsWith('(left out for space: 1 files read, 1 other paths named, 1 commands run)')).toBe(true)
    expect(buildArtifactTrail(extraction, { maxTokens: 5 })).toEqual({
      text: '',
      tokens: 0,
      kept: {
        filesChanged: 0,
        filesRead: 0,
        otherPaths: 0,
        commands: 0,
        openProblems: 0,
        userConstraints: 0,
        hostEntries: 0,
      },
      cut: {
        filesChanged: 1,
        filesRead: 1,
        otherPaths: 1,
        commands: 2,
        openProblems: 1,
        userConstraints: 2,
        hostEntries: 0,
      },
      carried: 0,
      written: new Set(),
    })
  })

  it("says which of the region's artifacts it wrote exactly, between characters that are not word characters, and only those it kept", () => {
    const extraction = extractArtifacts(REGION)
    const whole = buildArtifactTrail(extraction)
    const entries = [...whole.written].map((key) => key.split('\u0000') as [string, string])
    // Files, commands, other paths and the user's sentences; every one of them is a region artifact the trail writes as it is.
    expect(new Set(entries.map(([artifactClass]) => artifactClass))).toEqual(
      new Set(['path', 'command', 'user-message']),
    )
    for (const [artifactClass, text] of entries) {
      expect(extraction.artifacts.some((artifact) => artifact.class === artifactClass && artifact.text === text)).toBe(
        true,
      )
      expect(occursAsWord(whole.text, text)).toBe(true)
    }
    // Cut for space: what is no longer written is no longer claimed.
    const cut = buildArtifactTrail(extraction, { maxTokens: 90 })
    expect(cut.written.size).toBeLessThan(whole.written.size)
    for (const key of cut.written) expect(occursAsWord(cut.text, key.split('\u0000')[1]!)).toBe(true)
    for (const key of whole.written)
      if (!cut.written.has(key) && key.startsWith('command'))
        expect(cut.text).not.toContain(`\`${key.split('\u0000')[1]!}\``)
  })

  it("writes the host's entries last, verbatim, and cuts them only after everything else", () => {
    const extraction = extractArtifacts(REGION)
    const trail = buildArtifactTrail(extraction, {
      hostEntries: ['Branch: fix/retries (ticket PAY-142)', 'The host reverted `src/legacy.ts` by hand'],
    })
    expect(
      trail.text.endsWith(
        '### Noted by the host\n- Branch: fix/retries (ticket PAY-142)\n- The host reverted `src/legacy.ts` by hand',
      ),
    ).toBe(true)
    expect(trail.kept.hostEntries).toBe(2)
    // A budget the host's line and the note about the cut fit, not much more: the region's items go first.
    const tight = buildArtifactTrail(extraction, {
      maxTokens: 110,
      hostEntries: ['Branch: fix/retries (ticket PAY-142)'],
    })
    expect(tight.kept.hostEntries).toBe(1)
    expect(tight.cut.filesRead + tight.cut.commands).toBeGreaterThan(0)
    expect(() => buildArtifactTrail(extraction, { hostEntries: ['two\nlines'] })).toThrow(
      'buildArtifactTrail: hostEntries[0] must be one non-empty line, got "two\\nlines"',
    )
    expect(() => buildArtifactTrail(extraction, { hostEntries: [' '] })).toThrow(
      'hostEntries[0] must be one non-empty line',
    )
  })

  it('lists every error headline of a failing run under its problem, up to three', () => {
    const region = logOf([
      call('a', 'bash', { command: 'pnpm vitest run test/tax.test.ts' }),
      result(
        'a',
        ' FAIL  test/tax.test.ts > adds tax\nAssertionError: expected 119 to be 100 // Object.is equality\nExit code: 1',
      ),
    ])
    expect(buildArtifactTrail(extractArtifacts(region)).text).toContain(
      [
        '- `pnpm vitest run test/tax.test.ts`:',
        '  - FAIL test/tax.test.ts > adds tax',
        '  - AssertionError: expected 119 to be 100 // Object.is equality',
      ].join('\n'),
    )
  })

  it('measures with the estimate it is given', () => {
    const trail = buildArtifactTrail(extractArtifacts(REGION), { maxTokens: 8, estimateTokens: lines })
    expect(lines(trail.text)).toBeLessThanOrEqual(8)
    expect(trail.tokens).toBe(lines(trail.text))
  })

  it('is empty for a region without tool calls or constraints, and quotes backticks safely', () => {
    expect(buildArtifactTrail(extractArtifacts(logOf([user('hello there')]))).text).toBe('')
    const trail = buildArtifactTrail(
      extractArtifacts(logOf([call('a', 'bash', { command: 'echo `date`' }), result('a', 'x')])),
    )
    expect(trail.text).toContain('- `` echo `date` `` → ok')
  })

  it('refuses a budget that is not a positive integer and an estimate that is not a function', () => {
    const extraction = extractArtifacts(REGION)
    expect(() => buildArtifactTrail(extraction, { maxTokens: 0 })).toThrow(
      'buildArtifactTrail: maxTokens must be a positive integer, got 0',
    )
    expect(() => buildArtifactTrail(extraction, { estimateTokens: 4 as never })).toThrow(
      'buildArtifactTrail: estimateTokens must be a function, got number',
    )
    expect(() => buildArtifactTrail({} as never)).toThrow(
      'buildArtifactTrail: extraction must be what extractArtifacts returns ({ artifacts, toolCalls })',
    )
  })
})

describe('buildArtifactTrail carrying the trail of the checkpoint it replaces', () => {
  const previous = `## Goal and Intent\n- Configurable retries.\n\n${buildArtifactTrail(extractArtifacts(REGION)).text}`
  const NEXT = logOf(
    [
      call('g', 'read_file', { path: 'src/config.ts' }),
      result('g', 'export const config = { retryMs: 250 }'),
      call('h', 'read_file', { path: 'src/checkout/pay.ts' }),
      result('h', 'export const RETRY_MS = config.retryMs'),
      call('i', 'bash', { command: 'pnpm vitest run test/pay.test.ts' }),
      result('i', ' ✓ test/pay.test.ts (3 tests)\nExit code: 0'),
      user('Stop after the tests pass.'),
    ],
    100,
  )

  it('keeps what the earlier fold recorded, gives way where this region has something newer, and keeps a changed file changed', () => {
    const trail = buildArtifactTrail(extractArtifacts(NEXT), { carryFrom: previous })
    expect(trail.text).toBe(
      [
        '## Artifact Trail',
        "(recorded from the tool calls and the user's messages by warmfold, not summarized)",
        '### Files changed',
        '- `src/checkout/pay.ts` (read_file)',
        '### Files read',
        '- `src` (grep)',
        '- `src/config.ts` (read_file)',
        '### Commands run',
        '- `pnpm tsc --noEmit` → ok (2 runs)',
        '- `pnpm vitest run test/pay.test.ts` → exit 0',
        '### User constraints and corrections',
        '- Do not change src/api/public.ts, and use pnpm',
        '- Actually, keep the default at 250 ms',
        '- Stop after the tests pass',
      ].join('\n'),
    )
    // The earlier trail's file read, command and two sentences: the rest gave way (the failing test run passed since, so its problem is gone).
    expect(trail.carried).toBe(4)
    // Without the earlier checkpoint, or with one that has no trail, nothing is carried.
    expect(buildArtifactTrail(extractArtifacts(NEXT), { carryFrom: '## Goal and Intent\n- x' })).toEqual(
      buildArtifactTrail(extractArtifacts(NEXT)),
    )
    expect(buildArtifactTrail(extractArtifacts(NEXT)).carried).toBe(0)
  })

  it('reads the last trail of the checkpoint (a summary may copy an earlier one), multi-line problems and code spans with backticks', () => {
    const copied = '## Artifact Trail\n### Files read\n- `src/copied-by-the-model.ts` (read_file)'
    const failing = buildArtifactTrail(
      extractArtifacts(
        logOf([
          call('a', 'bash', { command: 'echo `date` && false' }),
          result('a', 'FAIL one\nFAIL two\nExit code: 1', true),
        ]),
      ),
    ).text
    const trail = buildArtifactTrail(extractArtifacts(logOf([user('Go on.')])), {
      carryFrom: `${copied}\n\n${failing}`,
    })
    expect(trail.text).not.toContain('copied-by-the-model')
    expect(trail.text).toContain('### Open problems\n- ``echo `date` && false``:\n  - FAIL one\n  - FAIL two')
    expect(trail.text).toContain('- ``echo `date` && false`` → exit 1')
    // The same command run again, now passing: both its command line and its problem give way.
    const again = buildArtifactTrail(
      extractArtifacts(logOf([call('b', 'bash', { command: 'echo `date` && false' }), result('b', 'Exit code: 0')])),
      { carryFrom: failing },
    )
    expect(again.carried).toBe(0)
    expect(again.text).not.toContain('Open problems')
  })

  it("cuts carried entries before the region's own (the user's words and the host's lines last, as always), and refuses a carryFrom that is not text", () => {
    const full = buildArtifactTrail(extractArtifacts(NEXT), { carryFrom: previous, estimateTokens: lines })
    // One line less, with the note's line to pay for: the carried file read and the carried
    // command go, though files read are otherwise cut before commands; the region's stay.
    const tight = buildArtifactTrail(extractArtifacts(NEXT), {
      carryFrom: previous,
      estimateTokens: lines,
      maxTokens: lines(full.text) - 1,
    })
    expect(tight.cut).toEqual({
      filesChanged: 0,
      filesRead: 1,
      otherPaths: 0,
      commands: 1,
      openProblems: 0,
      userConstraints: 0,
      hostEntries: 0,
    })
    expect(tight.text).not.toContain('- `src` (grep)')
    expect(tight.text).not.toContain('- `pnpm tsc --noEmit` → ok (2 runs)')
    expect(tight.text).toContain('- `src/config.ts` (read_file)')
    expect(tight.text).toContain('- `pnpm vitest run test/pay.test.ts` → exit 0')
    expect(tight.carried).toBe(4)
    // Much less: everything but the user's words goes, the region's file changed last; then the
    // carried sentences before the region's own.
    const tighter = buildArtifactTrail(extractArtifacts(NEXT), {
      carryFrom: previous,
      estimateTokens: lines,
      maxTokens: 6,
    })
    expect(tighter.text.split('\n').filter((line) => line.startsWith('- '))).toEqual([
      '- Actually, keep the default at 250 ms',
      '- Stop after the tests pass',
    ])
    expect(() => buildArtifactTrail(extractArtifacts(NEXT), { carryFrom: 3 as never })).toThrow(
      'buildArtifactTrail: carryFrom must be the text of the checkpoint this fold replaces, got number',
    )
  })
})
