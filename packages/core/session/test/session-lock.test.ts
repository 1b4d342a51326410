import type { ChildProcess } from 'node:child_process'
import { createHash } from 'node:crypto'
import { once } from 'node:events'
import { readdirSync, readFileSync } from 'node:fs'
import { mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises'
import { hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import { canonicalJson, createUserMessage } from '@warmfold/llm'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { JsonlFileBackend, Session, SessionError } from '../src/index.ts'
import { ask, deadPid, forkFixture, startZombie } from './child-process.ts'

let directory: string
let dead: number
const firstLine = (() => {
  const session = new Session('line', { now: () => 1 })
  session.append('user/message', { message: createUserMessage('hello', 'm0') }, 'append')
  return `${canonicalJson(session.eventAt(0))}\n`
})()

beforeAll(async () => {
  dead = await deadPid()
})
beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'warmfold-lock-'))
})
afterEach(async () => {
  await rm(directory, { recursive: true, force: true })
})

/** A stored one-event session `id` whose lock file holds `lock` (text as is, or an owner record). */
async function staleSession(id: string, lock: string | Record<string, unknown>): Promise<string> {
  const file = join(directory, `${id}.jsonl`)
  await writeFile(file, firstLine)
  await writeFile(`${file}.lock`, typeof lock === 'string' ? lock : JSON.stringify(lock))
  return file
}

async function openWith(backend: JsonlFileBackend, id: string): Promise<Session | SessionError> {
  return backend
    .open(id, {}, () => {})
    .catch((error: unknown) => {
      if (!SessionError.isInstance(error)) throw error
      return error
    })
}

/** Opens `id` with a fresh backend, expects success and releases it again. */
async function opensAndReleases(id: string): Promise<void> {
  const backend = new JsonlFileBackend(directory)
  const session = await backend.open(id, {}, () => {})
  expect(session.length).toBe(1)
  const lock = JSON.parse(readFileSync(join(directory, `${id}.jsonl.lock`), 'utf8')) as { pid: number }
  expect(lock.pid).toBe(process.pid)
  backend.releaseSync(session)
}

/** The start time of `pid` in clock ticks since boot, from `/proc/<pid>/stat` field 22. */
function procStart(pid: number): number {
  const text = readFileSync(`/proc/${pid}/stat`, 'utf8')
  return Number(text.slice(text.lastIndexOf(')') + 2).split(' ')[19])
}

describe('stale-lock takeover is atomic', () => {
  it('in 1,000 in-process trials of two stores opening a session with a dead owner’s lock, exactly one wins', async () => {
    let doubles = 0
    for (let trial = 0; trial < 1000; trial++) {
      const id = `race-${trial}`
      await staleSession(id, { pid: dead, hostname: hostname(), token: 'dead' })
      const stores = [new JsonlFileBackend(directory), new JsonlFileBackend(directory)]
      const results = await Promise.all(stores.map((store) => openWith(store, id)))
      const winners = results.flatMap((result, index) =>
        SessionError.isInstance(result) ? [] : [{ store: stores[index]!, session: result }],
      )
      if (winners.length !== 1) doubles += 1
      for (const result of results) if (SessionError.isInstance(result)) expect(result.code).toBe('LOCKED')
      for (const { store, session } of winners) store.releaseSync(session)
    }
    expect(doubles).toBe(0)
    // Nothing is left behind: no temp files, no takeover claims, no locks.
    expect((await readdir(directory)).filter((name) => !name.endsWith('.jsonl'))).toEqual([])
  }, 120_000)

  describe('across processes', () => {
    const TRIALS = 1000
    let contenders: ChildProcess[] = []
    beforeAll(async () => {
      contenders = [forkFixture('lock-contender.ts'), forkFixture('lock-contender.ts')]
      await Promise.all(contenders.map((child) => once(child, 'message')))
    }, 60_000)
    afterAll(() => {
      for (const child of contenders) child.kill()
    })

    it(`in ${TRIALS} trials of two processes opening a session with a dead owner’s lock, exactly one wins`, async () => {
      let doubles = 0
      let wins = 0
      for (let trial = 0; trial < TRIALS; trial++) {
        const id = `cross-${trial}`
        await staleSession(id, { pid: dead, hostname: hostname(), token: 'dead' })
        const replies = await Promise.all(
          contenders.map((child) =>
            ask<{ opened: boolean; code?: string; message?: string }>(child, { op: 'open', directory, id }),
          ),
        )
        const opened = replies.filter((reply) => reply.opened).length
        if (opened !== 1) doubles += 1
        wins += opened
        for (const reply of replies) if (!reply.opened) expect(reply.code, reply.message).toBe('LOCKED')
        await Promise.all(contenders.map((child) => ask(child, { op: 'close' })))
      }
      expect(doubles).toBe(0)
      expect(wins).toBe(TRIALS)
      expect((await readdir(directory)).filter((name) => !name.endsWith('.jsonl'))).toEqual([])
    }, 120_000)

    it('a live owner in another process keeps the session LOCKED, naming its pid', async () => {
      await staleSession('held', { pid: dead, hostname: hostname(), token: 'dead' })
      expect(await ask(contenders[0]!, { op: 'open', directory, id: 'held' })).toEqual({ opened: true })
      const error = await openWith(new JsonlFileBackend(directory), 'held')
      expect(SessionError.isInstance(error) && error.code).toBe('LOCKED')
      expect((error as Error).message).toContain(`pid ${contenders[0]!.pid} on ${hostname()}`)
      await ask(contenders[0]!, { op: 'close' })
      await opensAndReleases('held')
    })
  })
})

describe('locks that must not stay LOCKED for ever', () => {
  it('takes over a lock whose owner is a zombie (exited, not reaped)', async () => {
    const zombie = await startZombie()
    try {
      await staleSession('zombie', { pid: zombie.pid, hostname: hostname(), token: 'zombie' })
      await opensAndReleases('zombie')
    } finally {
      zombie.stop()
    }
  })

  it.each([
    ['empty', ''],
    ['garbage', '{"pid":'],
    ['not an owner', '{"pid":0,"hostname":"x","token":"t"}'],
  ])(
    'takes over an %s lock file (a complete lock file is linked into place, so this is never a writer mid-write)',
    async (_name, content) => {
      await staleSession('garbage', content)
      await opensAndReleases('garbage')
    },
  )

  it('takes over a lock from an earlier boot of this machine', async () => {
    await staleSession('reboot', { pid: process.pid, hostname: hostname(), token: 'old', boot: 'an-earlier-boot' })
    await opensAndReleases('reboot')
  })

  it('takes over a lock whose pid now belongs to another process', async () => {
    await staleSession('reused', {
      pid: process.pid,
      hostname: hostname(),
      token: 'old',
      start: procStart(process.pid) - 1,
    })
    await opensAndReleases('reused')
  })

  it('keeps a lock of this process with the same start time LOCKED (another store in this process)', async () => {
    const first = new JsonlFileBackend(directory)
    await staleSession('mine', { pid: dead, hostname: hostname(), token: 'dead' })
    const session = await first.open('mine', {}, () => {})
    const error = await openWith(new JsonlFileBackend(directory), 'mine')
    expect((error as SessionError).code).toBe('LOCKED')
    expect((error as Error).message).toContain('(another store in this process)')
    first.releaseSync(session)
  })

  it('keeps a lock from another host LOCKED (a networked folder is not supported, so it cannot be checked)', async () => {
    await staleSession('remote', { pid: dead, hostname: `not-${hostname()}`, token: 'remote' })
    const error = await openWith(new JsonlFileBackend(directory), 'remote')
    expect((error as SessionError).code).toBe('LOCKED')
    expect((error as Error).message).toContain(`which cannot be checked from ${hostname()}`)
  })
})

/** The claim file a contender takes on the current instance of `id`'s lock (see `SessionLock`). */
async function claimPath(id: string, level: number): Promise<string> {
  const lock = join(directory, `${id}.jsonl.lock`)
  const found = await stat(lock, { bigint: true })
  const key = createHash('sha256')
    .update(`${found.ino}:${found.ctimeNs}:${readFileSync(lock, 'utf8')}`)
    .digest('hex')
    .slice(0, 16)
  return `${lock}.takeover-${key}.${level}`
}

describe('takeover claims', () => {
  it('steps over a claim abandoned by a contender that died mid-takeover, and removes it', async () => {
    await staleSession('abandoned', { pid: dead, hostname: hostname(), token: 'dead' })
    await writeFile(
      await claimPath('abandoned', 1),
      JSON.stringify({ pid: dead, hostname: hostname(), token: 'claimant' }),
    )
    await opensAndReleases('abandoned')
    expect(readdirSync(directory).filter((name) => name.includes('takeover'))).toEqual([])
  })

  it('backs off with LOCKED while a live contender holds the claim', async () => {
    await staleSession('contended', { pid: dead, hostname: hostname(), token: 'dead' })
    const claim = await claimPath('contended', 1)
    await writeFile(claim, JSON.stringify({ pid: process.pid, hostname: hostname(), token: 'claimant' }))
    const error = await openWith(new JsonlFileBackend(directory), 'contended')
    expect((error as SessionError).code).toBe('LOCKED')
    expect((error as Error).message).toContain(`pid ${process.pid} on ${hostname()} is taking over the stale lock`)
    await rm(claim)
    await opensAndReleases('contended')
  })
})
