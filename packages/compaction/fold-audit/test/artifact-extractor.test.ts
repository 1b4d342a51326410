import type { Message } from '@warmfold/llm'
import { describe, expect, it } from 'vitest'
import type { LoggedMessage } from '../src/index.ts'
import { ArtifactExtractor, checkpointArtifacts, extractArtifacts } from '../src/index.ts'
import { loadCorpus } from './corpus-sample.ts'
import { call, logOf, result, user } from './log-fixture.ts'

/** Every corpus sample's messages as one long log, seqs renumbered (the messages stay the frozen objects). */
function corpusLog(): LoggedMessage[] {
  return logOf(loadCorpus().flatMap((sample) => sample.messages.map(({ message }) => message)))
}

/** The same messages as copies nobody read before (structuredClone: new and not frozen). */
const fresh = (messages: readonly LoggedMessage[]): LoggedMessage[] =>
  messages.map(({ seq, message }) => ({ seq, message: structuredClone(message) as Message }))

describe('ArtifactExtractor', () => {
  it('extracts every region of the corpus log as extractArtifacts does, though each message was read before, for another region', () => {
    const log = corpusLog()
    expect(log.every(({ message }) => Object.isFrozen(message))).toBe(true)
    const extractor = new ArtifactExtractor()
    for (const { message } of log) extractor.read(message)
    expect(log.every(({ message }) => extractor.has(message))).toBe(true)
    // Regions that start and end in different places: a kept reading must not carry the seq or
    // the neighbours of the region it was read for.
    const size = Math.ceil(log.length / 5)
    for (let start = 0; start < log.length; start += Math.ceil(size / 2)) {
      const region = log.slice(start, start + size)
      expect(extractor.extract(region)).toEqual(extractArtifacts(fresh(region)))
    }
    expect(extractor.extract(log)).toEqual(extractArtifacts(fresh(log)))
  })

  it("links a result to its call when both were read on their own, and reports them at this region's seqs", () => {
    const messages = [
      user('Run the tests.'),
      call('c1', 'bash', { command: 'pnpm test' }),
      result('c1', 'Error: expected 2 to be 3\nExit code: 1', true),
    ]
    const extractor = new ArtifactExtractor()
    for (const message of messages) extractor.read(message)
    const { toolCalls, artifacts } = extractor.extract(logOf(messages, 40))
    expect(toolCalls).toEqual([
      expect.objectContaining({
        seq: 41,
        id: 'c1',
        command: 'pnpm test',
        result: { seq: 42, isError: true, exitCode: 1, errors: ['Error: expected 2 to be 3'] },
      }),
    ])
    expect(artifacts.find((artifact) => artifact.class === 'command')).toMatchObject({
      text: 'pnpm test',
      seq: 41,
      firstSeq: 41,
    })
    // Without its call the region has no record of the result, as extractArtifacts has none.
    expect(extractor.extract(logOf(messages.slice(2), 7)).toolCalls).toEqual([])
  })

  it('keeps no reading of a message that is not frozen: one changed after it was read is read again', () => {
    const message = structuredClone(user('Never touch src/legacy.ts.')) as Message & {
      content: { type: 'text'; text: string }[]
    }
    const extractor = new ArtifactExtractor()
    expect(extractor.extract(logOf([message])).artifacts.map((artifact) => artifact.text)).toContain('src/legacy.ts')
    expect(extractor.has(message)).toBe(false)
    message.content[0]!.text = 'Never touch src/kernel.ts.'
    const texts = extractor.extract(logOf([message])).artifacts.map((artifact) => artifact.text)
    expect(texts).toContain('src/kernel.ts')
    expect(texts).not.toContain('src/legacy.ts')
  })

  it('reads with its own options: a workspace root and tool kinds decide the reading it keeps', () => {
    const messages = [call('w', 'save', { path: '/home/dev/app/src/a.ts' })]
    const rooted = new ArtifactExtractor({ workspaceRoot: '/home/dev/app', toolKinds: { save: 'write' } })
    const plain = new ArtifactExtractor()
    const [withRoot] = rooted.extract(logOf(messages)).toolCalls
    const [without] = plain.extract(logOf(messages)).toolCalls
    expect([withRoot?.paths, withRoot?.fileAction]).toEqual([['src/a.ts'], 'changed'])
    expect(without?.paths).toEqual(['/home/dev/app/src/a.ts'])
  })

  it("keeps a checkpoint's summary artifacts with its message, and reads again for another text or a message that is not frozen", () => {
    const summary = '## Files and Code\n- /home/dev/app/src/a.ts\n## Errors and Fixes\n- `TypeError: x is undefined`'
    const checkpoint = Object.freeze({
      ...user('checkpoint'),
      content: Object.freeze([{ type: 'text' as const, text: summary }]),
    }) as Message
    const extractor = new ArtifactExtractor({ workspaceRoot: '/home/dev/app' })
    const read = extractor.readCheckpoint(checkpoint, summary)
    expect(read).toEqual(checkpointArtifacts(summary, { workspaceRoot: '/home/dev/app' }))
    expect(read.map((artifact) => artifact.text)).toEqual(['src/a.ts', 'TypeError: x is undefined'])
    expect(extractor.readCheckpoint(checkpoint, summary)).toBe(read)
    expect(extractor.readCheckpoint(checkpoint, 'src/b.ts').map((artifact) => artifact.text)).toEqual(['src/b.ts'])
    const open = { ...checkpoint }
    expect(extractor.readCheckpoint(open, summary)).not.toBe(extractor.readCheckpoint(open, summary))
  })
})
