import { describe, expect, it } from 'vitest'
import type { Artifact } from '../src/index.ts'
import { auditFold, buildArtifactTrail, checkpointArtifacts, extractArtifacts, heldArtifactList } from '../src/index.ts'
import { HELD_OUT_FOLDER, loadCorpus } from './corpus-sample.ts'
import { assistant, call, logOf, result, user } from './log-fixture.ts'

const artifact = (partial: Partial<Artifact> & Pick<Artifact, 'class' | 'text'>): Artifact => ({
  seq: 1,
  firstSeq: 1,
  origin: 'tool',
  mentions: 1,
  ...partial,
})

const REGION = logOf([
  user('Fix the flaky checkout test. Never touch src/cart/index.ts.'),
  call('a', 'bash', { command: 'pnpm vitest run test/checkout.test.ts' }),
  result('a', ' FAIL  test/checkout.test.ts > pays\nError: Test timed out in 5000ms.\n Duration  5.21s', true),
  call('b', 'read_file', { path: 'src/checkout/pay.ts' }),
  result('b', 'export const RETRY_MS = 250 // see https://acme.dev/adr/12 and #412'),
])

describe('auditFold: survival', () => {
  const { artifacts } = extractArtifacts(REGION)

  it('counts per class what the checkpoint and the rest still hold, verbatim after normalization', () => {
    const audit = auditFold({
      folded: artifacts,
      checkpointText:
        '## Errors and Fixes\n- `pnpm vitest run test/checkout.test.ts` fails: Error: Test timed out in 5000ms\n- file ./src/checkout/pay.ts:3',
      visibleAfter: [user('fix the flaky checkout test')],
    })
    expect(audit.classes).toEqual({
      'user-message': { seen: 2, kept: 1, keptInCheckpoint: 0 },
      error: { seen: 2, kept: 1, keptInCheckpoint: 1 },
      command: { seen: 1, kept: 1, keptInCheckpoint: 1 },
      path: { seen: 3, kept: 2, keptInCheckpoint: 2 },
      identifier: { seen: 1, kept: 0, keptInCheckpoint: 0 },
      url: { seen: 1, kept: 0, keptInCheckpoint: 0 },
      number: { seen: 2, kept: 1, keptInCheckpoint: 1 },
    })
    expect(audit.droppedTotal).toBe(6)
  })

  it('ranks dropped items class by class, round robin, and bounds the list', () => {
    const audit = auditFold({ folded: artifacts, checkpointText: 'nothing useful', maxDropped: 5 })
    expect(audit.droppedTotal).toBe(artifacts.length)
    expect(audit.dropped.map((item) => [item.class, item.text, item.recoverable])).toEqual([
      // Both sentences came from seq 0 and both errors from seq 2, once each: the text decides.
      ['user-message', 'Fix the flaky checkout test', false],
      ['error', 'Error: Test timed out in 5000ms', false],
      ['command', 'pnpm vitest run test/checkout.test.ts', false],
      ['path', 'src/cart/index.ts', true],
      ['identifier', '#412', false],
    ])
    // Within a class: what the user typed first, then the newest, then the most mentioned.
    expect(
      auditFold({ folded: artifacts, checkpointText: '' })
        .dropped.filter((item) => item.class === 'path')
        .map((item) => item.text),
    ).toEqual(['src/cart/index.ts', 'src/checkout/pay.ts', 'test/checkout.test.ts'])
  })

  it('finds what a tool call still shows in its arguments, numbers with or without the space before the unit, user words in any case', () => {
    const folded = [
      artifact({ class: 'command', text: 'grep -rn "retry" src' }),
      artifact({ class: 'number', text: '5.21s' }),
      artifact({ class: 'number', text: '1.8 GB' }),
      artifact({ class: 'user-message', text: 'Keep the API' }),
    ]
    const audit = auditFold({
      folded,
      checkpointText: 'took 5.21 s and 1.8GB; KEEP THE API',
      visibleAfter: [call('x', 'bash', { command: 'grep -rn "retry" src' })],
    })
    expect(audit.droppedTotal).toBe(0)
  })

  it("finds the user's words in any case and only as whole words, however many sentences the region holds (an automaton past 32, indexOf below)", () => {
    for (const count of [3, 40]) {
      const folded = Array.from({ length: count }, (_, index) =>
        artifact({ class: 'user-message', text: `Keep module ${index} stable` }),
      )
      const checkpoint = `KEEP MODULE 0 STABLE. keep module 2 stablex. Keep Module ${count - 1} Stable!`
      const audit = auditFold({
        folded,
        checkpointText: checkpoint,
        visibleAfter: [user('keep module 1 stable, please')],
      })
      expect(audit.classes['user-message']).toEqual({ seen: count, kept: 3, keptInCheckpoint: 2 })
      expect(audit.droppedTotal).toBe(count - 3)
    }
  })

  it("searches a message as it is now: a text kept from an earlier audit is only ever a frozen message's", () => {
    const folded = [
      artifact({ class: 'path', text: 'src/cart/index.ts' }),
      artifact({ class: 'user-message', text: 'Keep the API' }),
    ]
    const frozen = user('See src/cart/index.ts. KEEP THE API.')
    const open = structuredClone(frozen) as typeof frozen & { content: { type: 'text'; text: string }[] }
    for (const visible of [frozen, open]) {
      const audit = auditFold({ folded, checkpointText: '', visibleAfter: [visible] })
      expect([audit.classes.path.kept, audit.classes['user-message'].kept]).toEqual([1, 1])
    }
    open.content[0]!.text = 'Nothing left.'
    const after = auditFold({ folded, checkpointText: '', visibleAfter: [open] })
    expect([after.classes.path.kept, after.classes['user-message'].kept]).toEqual([0, 0])
  })

  it('finds what the trail wrote without a search, with the same result as a search', () => {
    const extraction = extractArtifacts(REGION)
    for (const maxTokens of [1000, 90, 5]) {
      const trail = buildArtifactTrail(extraction, { maxTokens })
      const input = {
        folded: extraction.artifacts,
        checkpointText: `## Goal\n- fix it\n\n${trail.text}`,
        visibleAfter: ['pnpm vitest run test/pay.test.ts'],
      }
      expect(auditFold({ ...input, writtenInCheckpoint: trail.written })).toEqual(auditFold(input))
    }
    // Every labelled sample as a region, its trail under a roomy and a tight budget, searched for in a checkpoint of the trail and a summary that drops half the region's paths.
    for (const sample of [...loadCorpus(), ...loadCorpus(HELD_OUT_FOLDER)]) {
      const regionArtifacts = extractArtifacts(sample.messages)
      const paths = regionArtifacts.artifacts.filter((artifact) => artifact.class === 'path')
      const summary = `## Files and Code\n- ${paths
        .filter((_, index) => index % 2 === 0)
        .map((artifact) => artifact.text)
        .join(', ')}`
      for (const maxTokens of [1000, 60]) {
        const trail = buildArtifactTrail(regionArtifacts, { maxTokens })
        const input = { folded: regionArtifacts.artifacts, checkpointText: `${summary}\n\n${trail.text}` }
        expect(auditFold({ ...input, writtenInCheckpoint: trail.written }), sample.name).toEqual(auditFold(input))
      }
    }
    // What the caller says it wrote counts as in the checkpoint: the check is the caller's.
    const claimed = auditFold({
      folded: artifacts,
      checkpointText: 'Nothing.',
      writtenInCheckpoint: new Set(['command\u0000pnpm vitest run test/checkout.test.ts']),
    })
    expect(claimed.classes.command).toEqual({ seen: 1, kept: 1, keptInCheckpoint: 1 })
    expect(() => auditFold({ folded: [], checkpointText: 'x', writtenInCheckpoint: ['src/a.ts'] as never })).toThrow(
      "auditFold: writtenInCheckpoint must be a Set of artifact keys (the artifact trail's written), got object",
    )
  })

  it('counts the artifact trail appended to the checkpoint as kept', () => {
    const trail = buildArtifactTrail(extractArtifacts(REGION))
    const audit = auditFold({ folded: artifacts, checkpointText: `## Goal\n- fix it\n\n${trail.text}` })
    expect(audit.classes.command).toEqual({ seen: 1, kept: 1, keptInCheckpoint: 1 })
    // The file read, the test file in the command, the file in the user's constraint.
    expect(audit.classes.path).toEqual({ seen: 3, kept: 3, keptInCheckpoint: 3 })
    expect(audit.classes['user-message'].kept).toBe(1)
  })
})

describe('auditFold: previous checkpoint and health', () => {
  it('lists what the previous checkpoint held that nothing visible holds now', () => {
    const previousCheckpoint =
      '## Files and Code\n- src/a.ts, src/b.ts\n## Errors and Fixes\n- `TypeError: x is undefined` in `npm test`'
    const audit = auditFold({
      folded: [],
      checkpointText: '## Files and Code\n- src/a.ts',
      previousCheckpoint,
      visibleAfter: ['npm test passes now'],
    })
    expect(audit.previousCheckpointArtifacts).toBe(4)
    expect(audit.vanishedFromPreviousCheckpoint).toEqual([
      { class: 'error', text: 'TypeError: x is undefined', mentions: 1 },
      { class: 'path', text: 'src/b.ts', mentions: 1 },
    ])
    expect(audit.vanishedTotal).toBe(2)
    expect(audit.health.sizeRatioToPrevious).toBe(audit.health.characters / previousCheckpoint.length)
  })

  it("takes the previous checkpoint's artifacts from the caller when it read them before, and reads the text when not", () => {
    const previousCheckpoint = '## Files and Code\n- src/a.ts, src/b.ts'
    const input = { folded: [], checkpointText: '## Files and Code\n- src/a.ts', previousCheckpoint }
    const read = checkpointArtifacts(previousCheckpoint)
    expect(read.map((artifact) => artifact.text)).toEqual(['src/a.ts', 'src/b.ts'])
    expect(auditFold({ ...input, previousCheckpointArtifacts: read })).toEqual(auditFold(input))
    // What the caller passes is what is compared: the text is not read again.
    const onlyB = read.filter((artifact) => artifact.text === 'src/b.ts')
    expect(auditFold({ ...input, previousCheckpointArtifacts: onlyB })).toMatchObject({
      previousCheckpointArtifacts: 1,
      vanishedTotal: 1,
    })
    expect(() => auditFold({ folded: [], checkpointText: 'x', previousCheckpointArtifacts: read })).toThrow(
      'auditFold: previousCheckpointArtifacts was given without the previousCheckpoint they were read from',
    )
    expect(() => auditFold({ ...input, previousCheckpointArtifacts: 'src/a.ts' as never })).toThrow(
      'auditFold: previousCheckpointArtifacts must be an array of artifacts, got string',
    )
    expect(() =>
      auditFold({ ...input, previousCheckpointArtifacts: [{ class: 'path', text: 'src/a.ts', mentions: 0 }] }),
    ).toThrow(
      'auditFold: previousCheckpointArtifacts[0] is not an artifact (class, non-empty text, mentions ≥ 1): {"class":"path","text":"src/a.ts","mentions":0}',
    )
  })

  it("says what the new checkpoint holds of what it compared, once each, and the next fold compares that list as its previous checkpoint's artifacts", () => {
    const folded = extractArtifacts(REGION).artifacts
    const paths = folded.filter((artifact) => artifact.class === 'path')
    const checkpointText = `## Files and Code\n- ${paths.map((artifact) => artifact.text).join(', ')}\n- Also src/invented.ts.`
    const first = auditFold({ folded, checkpointText })
    // Every path of the region, not the path the summary made up (the conversation never held it), and nothing the checkpoint lacks.
    expect(first.heldInCheckpoint).toEqual({
      path: Object.fromEntries(paths.map((artifact) => [artifact.text, artifact.mentions])),
    })
    const held = heldArtifactList(first.heldInCheckpoint)
    expect(held).toEqual(
      paths.map(({ class: artifactClass, text, mentions }) => ({ class: artifactClass, text, mentions })),
    )
    const second = auditFold({
      folded: [],
      checkpointText: 'Nothing.',
      previousCheckpoint: checkpointText,
      previousCheckpointArtifacts: held,
    })
    expect(second.previousCheckpointArtifacts).toBe(paths.length)
    expect(second.vanishedFromPreviousCheckpoint.map((item) => item.text).toSorted()).toEqual(
      paths.map((item) => item.text).toSorted(),
    )
    // An artifact both in the region and in the previous checkpoint is held once.
    const third = auditFold({
      folded,
      checkpointText,
      previousCheckpoint: checkpointText,
      previousCheckpointArtifacts: held,
    })
    expect(third.heldInCheckpoint).toEqual(first.heldInCheckpoint)
  })

  it('reads a logged list of held artifacts back, and names what is wrong in one that is not', () => {
    const logged = JSON.parse('{"path":{"src/a.ts":2,"__proto__":1},"command":{"pnpm test":1}}') as unknown
    expect(heldArtifactList(logged)).toEqual([
      { class: 'command', text: 'pnpm test', mentions: 1 },
      { class: 'path', text: 'src/a.ts', mentions: 2 },
      { class: 'path', text: '__proto__', mentions: 1 },
    ])
    expect(() => heldArtifactList([], 'audit at seq 4')).toThrow(
      'audit at seq 4 must be an object of artifact classes, got []',
    )
    expect(() => heldArtifactList({ paths: {} })).toThrow('heldInCheckpoint: "paths" is not an artifact class')
    expect(() => heldArtifactList({ path: ['src/a.ts'] })).toThrow(
      'heldInCheckpoint.path must be an object of texts and their mentions, got ["src/a.ts"]',
    )
    expect(() => heldArtifactList({ path: { 'src/a.ts': 0 } })).toThrow(
      'heldInCheckpoint.path["src/a.ts"] must be a non-empty text with mentions ≥ 1, got 0',
    )
    expect(() => heldArtifactList({ path: { '': 1 } })).toThrow(
      'heldInCheckpoint.path[""] must be a non-empty text with mentions ≥ 1, got 1',
    )
  })

  it('checks the required sections, Markdown or bold, present, missing or empty, and the truncation flag', () => {
    const checkpointText =
      '## Goal and Intent\n- ship it\n**Key Decisions:**\n\n### errors and fixes\n(none)\n## Next Step'
    const audit = auditFold({
      folded: [],
      checkpointText,
      requiredSections: ['Goal and Intent', '## Key Decisions', 'Errors and Fixes', 'Next Step', 'Pending Work'],
      finishReason: 'max-tokens',
    })
    expect(audit.health).toEqual({
      sectionsPresent: ['Goal and Intent', '## Key Decisions', 'Errors and Fixes', 'Next Step'],
      sectionsMissing: ['Pending Work'],
      sectionsEmpty: ['## Key Decisions', 'Next Step'],
      truncated: true,
      characters: checkpointText.length,
      previousCharacters: null,
      sizeRatioToPrevious: null,
    })
    expect(auditFold({ folded: [], checkpointText, finishReason: 'stop' }).health.truncated).toBe(false)
    expect(auditFold({ folded: [], checkpointText }).health.truncated).toBeNull()
  })

  it('returns plain JSON with every field defined', () => {
    const audit = auditFold({
      folded: extractArtifacts(REGION).artifacts,
      checkpointText: 'x',
      previousCheckpoint: 'src/a.ts',
    })
    expect(JSON.parse(JSON.stringify(audit))).toEqual(audit)
  })
})

describe('auditFold: bad input', () => {
  it('names the field', () => {
    expect(() => auditFold({ folded: 'x' as never, checkpointText: '' })).toThrow(
      'auditFold: folded must be the artifacts of the folded region (an array), got string',
    )
    expect(() => auditFold({ folded: [{ class: 'colour', text: 'red' } as never], checkpointText: '' })).toThrow(
      'auditFold: folded[0] is not an artifact (class and non-empty text): {"class":"colour","text":"red"}',
    )
    expect(() => auditFold({ folded: [], checkpointText: 3 as never })).toThrow(
      'auditFold: checkpointText must be a string, got number',
    )
    expect(() => auditFold({ folded: [], checkpointText: '', maxDropped: 1.5 })).toThrow(
      'auditFold: maxDropped must be a non-negative integer, got 1.5',
    )
    expect(() => auditFold({ folded: [], checkpointText: '', visibleAfter: [null as never] })).toThrow(
      'auditFold: visibleAfter[0] must be a Message or a string, got null',
    )
    expect(() => auditFold({ folded: [], checkpointText: '', requiredSections: ['##'] })).toThrow(
      'auditFold: requiredSections holds "##", which names no section',
    )
  })
})

describe('auditFold and the assistant text', () => {
  it('reads the previous checkpoint like assistant text: errors and commands only inside code', () => {
    const audit = auditFold({
      folded: [],
      checkpointText: '',
      previousCheckpoint: 'Error: prose is not a headline\nrun `pnpm test`',
    })
    expect(audit.vanishedFromPreviousCheckpoint).toEqual([{ class: 'command', text: 'pnpm test', mentions: 1 }])
  })

  it('does not mistake a kept word for a path inside a longer name', () => {
    const audit = auditFold({
      folded: [artifact({ class: 'path', text: 'a.ts' })],
      checkpointText: 'changed data.ts',
      visibleAfter: [assistant('see schema.ts')],
    })
    expect(audit.droppedTotal).toBe(1)
  })
})
