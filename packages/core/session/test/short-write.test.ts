import { mkdtemp, readFile, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { TornTailRepair } from '../src/index.ts'
import { JsonlFileBackend, SessionError } from '../src/index.ts'
import { runFixture } from './child-process.ts'

let directory: string
beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'warmfold-short-write-'))
})
afterEach(async () => {
  await rm(directory, { recursive: true, force: true })
})

const LIMIT_BLOCKS = 4

describe('a write cut short by a file size limit (ulimit -f, a real child process)', () => {
  it('fails that flush, acknowledges only what is on disk, and leaves a repairable file', async () => {
    const { code, stdout, stderr } = await runFixture('limited-writer.ts', [directory], { fileBlocks: LIMIT_BLOCKS })
    expect(code, stderr).toBe(0)
    const lines = stdout.trim().split('\n')
    const acknowledged = lines.filter((line) => line.startsWith('ack ')).map((line) => Number(line.slice(4)))
    const failed = lines.find((line) => line.startsWith('fail '))
    expect(failed).toMatch(
      /^fail CLOSED: session limited: writing events \d+\.\.\d+ to .*limited\.jsonl failed, none of them is acknowledged: EFBIG/,
    )
    expect(lines.find((line) => line.startsWith('again '))).toMatch(
      /^again CLOSED: .*an earlier write to .* failed \(EFBIG/,
    )
    // The limit was reached inside a line: the kernel wrote part of the failed flush.
    const file = join(directory, 'limited.jsonl')
    expect((await stat(file)).size).toBe(LIMIT_BLOCKS * 1024)
    expect((await readFile(file, 'utf8')).endsWith('\n')).toBe(false)

    const backend = new JsonlFileBackend(directory)
    const torn = await backend.open('limited', {}, () => {}).catch((error: unknown) => error)
    expect(SessionError.isInstance(torn) && torn.code).toBe('TORN_TAIL')
    const repairs: TornTailRepair[] = []
    const session = await backend.open('limited', { repairTornTail: true }, (repair) => void repairs.push(repair))
    expect(repairs).toHaveLength(1)
    // Every event a flush acknowledged is there, and nothing a flush did not acknowledge.
    expect(acknowledged).toEqual(Array.from({ length: acknowledged.length }, (_, seq) => seq))
    expect(session.length).toBe(acknowledged.length)
    expect(session.deriveMessages().map((message) => message.id)).toEqual(acknowledged.map((seq) => `m${seq}`))
    backend.releaseSync(session)
  }, 60_000)
})
