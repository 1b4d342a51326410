import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createTestContext, recordCordisPrints } from '@warmfold/test-utils'
import { afterEach, describe, expect, it } from 'vitest'
import { main as customEvents } from '../examples/custom-events.ts'
import { main as usage } from '../examples/usage.ts'
import { SessionStore } from '../src/index.ts'

// The README shows these files verbatim (checked by test-utils' readme-examples test).
describe('README examples run', () => {
  const folders: string[] = []
  afterEach(async () => {
    for (const folder of folders.splice(0)) await rm(folder, { recursive: true, force: true })
  })

  it('usage: appends to a file-store session, flushes it, and it reopens with the same event', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'warmfold-session-example-'))
    folders.push(directory)
    const { result, printed } = await recordCordisPrints(() => usage(directory))
    expect(printed).toEqual([])
    expect(result.event).toMatchObject({ seq: 0, type: 'user/message', surface: { op: 'append' } })
    expect(result.messages).toEqual([result.event.data.message])
    expect((await readFile(join(directory, 'my-session.jsonl'), 'utf8')).split('\n').filter(Boolean)).toHaveLength(1)

    const test = await createTestContext()
    try {
      test.ctx.plugin(SessionStore, { store: 'file', directory })
      const reopened = await test.ctx.sessions.open('my-session')
      expect(reopened.events).toEqual([result.event])
      test.assertClean()
    } finally {
      await test.dispose()
    }
  })

  it('custom events: a merged event type and a replace land as one unit; the original stays in the log', async () => {
    const { result, printed } = await recordCordisPrints(customEvents)
    expect(printed).toEqual([])
    expect(result.pricing).toMatchObject({
      seq: 3,
      type: 'my-plugin/shorten',
      data: { shadowedSeqs: [2], savedCharacters: 6000 - 20 },
    })
    expect(result.pricing.surface).toBeUndefined()
    expect(result.replacement).toMatchObject({
      seq: 4,
      type: 'tool/result',
      surface: { op: 'replace', start: 2, end: 2, sourceEventSeqs: [2] },
    })
    expect(result.surface).toEqual({ nodes: [0, 1, 4], replaceGeneration: 1 })
    expect(result.kept).toBe(true)
  })
})
