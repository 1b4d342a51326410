import { appendFile, mkdtemp, readFile, rm, truncate, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { canonicalJson, createUserMessage } from '@warmfold/llm'
import type { TestContext } from '@warmfold/test-utils'
import { createTestContext } from '@warmfold/test-utils'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Session, TornTailRepair } from '../src/index.ts'
import { Session as SessionClass, SessionError, SessionStore } from '../src/index.ts'

let directory: string
const contexts: TestContext[] = []

beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'warmfold-unit-'))
})
afterEach(async () => {
  for (const context of contexts.splice(0)) await context.dispose()
  await rm(directory, { recursive: true, force: true })
})

async function store(): Promise<TestContext> {
  const context = await createTestContext()
  context.ctx.plugin(SessionStore, { store: 'file', directory })
  contexts.push(context)
  return context
}

function user(session: Session, id: string): void {
  session.append('user/message', { message: createUserMessage(`text of ${id}`, id) }, 'append')
}

/** A pair only valid together: a header (standing in for a pricing event) and a replace of position 0. */
function pair(session: Session, id: string): void {
  session.unit(() => {
    session.append('request/header', { header: { config: { provider: 'p', model: id } }, reason: 'change' })
    session.append(
      'user/message',
      { message: createUserMessage(`replacement ${id}`, id) },
      { op: 'replace', start: 0, end: 0, sourceEventSeqs: [session.surface.nodes[0]!] },
    )
  })
}

/** A file of: m0, m1, a two-event unit (seq 2, 3), m4; returns the file and its lines. */
async function fileWithUnit(id: string): Promise<{ file: string; lines: string[] }> {
  const context = await store()
  const session = await context.ctx.sessions.create(id)
  user(session, 'm0')
  user(session, 'm1')
  pair(session, 'r0')
  user(session, 'm4')
  await context.ctx.sessions.close(session)
  const file = join(directory, `${id}.jsonl`)
  return { file, lines: (await readFile(file, 'utf8')).split('\n').slice(0, -1) }
}

describe('Session.unit', () => {
  it('returns what build returns and keeps the events of a closed unit settled', () => {
    const session = new SessionClass('unit')
    user(session, 'm0')
    const seen: number[] = []
    const result = session.unit(() => {
      user(session, 'm1')
      seen.push(session.settledLength)
      session.unit(() => user(session, 'm2'))
      seen.push(session.settledLength)
      return 'built'
    })
    expect(result).toBe('built')
    expect(seen).toEqual([1, 1])
    expect(session.settledLength).toBe(3)
    expect([0, 1, 2].map((seq) => session.unitSizeAt(seq))).toEqual([1, 2, 1])
  })

  it('closes the unit with the events that landed when build throws', () => {
    const session = new SessionClass('throws')
    expect(() =>
      session.unit(() => {
        user(session, 'm0')
        throw new Error('second append refused')
      }),
    ).toThrow('second append refused')
    expect(session.length).toBe(1)
    expect(session.settledLength).toBe(1)
    user(session, 'm1')
    expect(session.settledLength).toBe(2)
  })

  it('rejects an async build, naming the session', () => {
    const session = new SessionClass('async')
    expect(() => session.unit(async () => user(session, 'm0'))).toThrow(/session async: unit\(build\) got a promise/)
    expect(session.settledLength).toBe(1)
  })
})

describe('units in the JSONL file store', () => {
  it('marks the first line of a unit with its size; other lines are unchanged', async () => {
    const { lines } = await fileWithUnit('marked')
    const records = lines.map((line) => JSON.parse(line) as { seq: number; unit?: number })
    expect(records.map((record) => record.unit)).toEqual([undefined, undefined, 2, undefined, undefined])
    const reopened = await (await store()).ctx.sessions.open('marked')
    expect(reopened.length).toBe(5)
    expect(canonicalJson({ ...reopened.eventAt(2), unit: 2 })).toBe(lines[2])
  })

  it('never flushes part of a unit, even when a flush runs inside it', async () => {
    const context = await store()
    const session = await context.ctx.sessions.create('inside')
    user(session, 'm0')
    const file = join(directory, 'inside.jsonl')
    session.unit(() => {
      user(session, 'm1')
      void context.ctx.sessions.flush(session)
      user(session, 'm2')
    })
    const during = await readFile(file, 'utf8')
    expect(
      during
        .split('\n')
        .slice(0, -1)
        .map((line) => (JSON.parse(line) as { seq: number }).seq),
    ).toEqual([0])
    await context.ctx.sessions.flush(session)
    expect(
      (await readFile(file, 'utf8'))
        .split('\n')
        .slice(0, -1)
        .map((line) => JSON.parse(line) as { seq: number; unit?: number }),
    ).toMatchObject([{ seq: 0 }, { seq: 1, unit: 2 }, { seq: 2 }])
  })

  it('treats a file cut inside the second line of a unit as a torn tail and repairs the whole unit', async () => {
    const { file, lines } = await fileWithUnit('cut')
    const keep = `${lines.slice(0, 2).join('\n')}\n`
    const tail = `${lines[2]}\n${lines[3]!.slice(0, 40)}`
    await writeFile(file, keep + tail)
    const error = await (await store()).ctx.sessions.open('cut').catch((reason: unknown) => reason)
    expect(SessionError.isInstance(error) && error.code).toBe('TORN_TAIL')
    expect((error as Error).message).toContain(
      `${file}:3: the unit of 2 events written together from this line (seq 2..3) is cut short by a torn line 4`,
    )

    const context = await store()
    const repairs: TornTailRepair[] = []
    context.ctx.on('session/repair', (repair) => void repairs.push(repair))
    const session = await context.ctx.sessions.open('cut', { repairTornTail: true })
    expect(session.length).toBe(2)
    expect(repairs).toEqual([
      { sessionId: 'cut', file, sidecar: `${file}.corrupt`, line: 3, bytes: Buffer.byteLength(tail), droppedEvents: 1 },
    ])
    expect(await readFile(file, 'utf8')).toBe(keep)
    expect(await readFile(`${file}.corrupt`, 'utf8')).toBe(tail)
    user(session, 'after')
    await context.ctx.sessions.close(session)
    expect((await (await store()).ctx.sessions.open('cut')).length).toBe(3)
  })

  it('treats a file that ends on a line boundary inside a unit as torn too', async () => {
    const { file, lines } = await fileWithUnit('boundary')
    await truncate(file, Buffer.byteLength(`${lines.slice(0, 3).join('\n')}\n`))
    const error = await (await store()).ctx.sessions.open('boundary').catch((reason: unknown) => reason)
    expect((error as SessionError).code).toBe('TORN_TAIL')
    expect((error as Error).message).toContain('is cut short by the end of the file')
    const session = await (await store()).ctx.sessions.open('boundary', { repairTornTail: true })
    expect(session.length).toBe(2)
    expect(await readFile(`${file}.corrupt`, 'utf8')).toBe(`${lines[2]}\n`)
  })

  it('keeps a complete unit whose last line only lacks its newline', async () => {
    const { file, lines } = await fileWithUnit('newline')
    await writeFile(file, lines.slice(0, 4).join('\n'))
    const context = await store()
    const session = await context.ctx.sessions.open('newline')
    expect(session.length).toBe(4)
    user(session, 'm4')
    await context.ctx.sessions.close(session)
    expect((await (await store()).ctx.sessions.open('newline')).length).toBe(5)
  })

  it('appends a second repair to the sidecar after the first, both complete', async () => {
    const { file, lines } = await fileWithUnit('twice')
    await writeFile(file, `${lines.slice(0, 2).join('\n')}\n${lines[2]}\n`)
    const first = await store()
    const session = await first.ctx.sessions.open('twice', { repairTornTail: true })
    user(session, 'm2')
    await first.ctx.sessions.close(session)
    await appendFile(file, '{"seq":3,"type":"user/mess')
    await (await store()).ctx.sessions.open('twice', { repairTornTail: true })
    expect(await readFile(`${file}.corrupt`, 'utf8')).toBe(`${lines[2]}\n{"seq":3,"type":"user/mess`)
  })

  it.each([
    ['0', /unit 0 is not a count of events/],
    ['"2"', /unit "2" is not a count of events/],
  ])('rejects a unit size of %s as corrupt, naming the line', async (value, message) => {
    const { file, lines } = await fileWithUnit('bad-size')
    lines[1] = lines[1]!.replace(/}$/, `,"unit":${value}}`)
    await writeFile(file, `${lines.join('\n')}\n`)
    const error = (await (
      await store()
    ).ctx.sessions
      .open('bad-size')
      .catch((reason: unknown) => reason)) as SessionError
    expect(error.code).toBe('CORRUPT')
    expect(error.message).toMatch(new RegExp(`${file}:2: ${message.source}`))
  })

  it('rejects a unit that starts inside another as corrupt', async () => {
    const { file, lines } = await fileWithUnit('nested')
    lines[3] = lines[3]!.replace(/}$/, ',"unit":2}')
    await writeFile(file, `${lines.join('\n')}\n`)
    const error = (await (await store()).ctx.sessions.open('nested').catch((reason: unknown) => reason)) as SessionError
    expect(error.code).toBe('CORRUPT')
    expect(error.message).toContain(
      `${file}:4: a unit of 2 events starts while the unit of 2 from line 3 is unfinished`,
    )
  })

  it('reads files written before units existed (no unit field) as before', async () => {
    const { file, lines } = await fileWithUnit('old')
    await writeFile(file, `${lines.map((line) => line.replace(',"unit":2', '')).join('\n')}\n`)
    expect((await (await store()).ctx.sessions.open('old')).length).toBe(5)
  })
})
