import { createUserMessage } from '@warmfold/llm'
import type { SessionBackend } from '@warmfold/session'
import { Session, SessionError } from '@warmfold/session'
import { afterEach, describe, expect, it } from 'vitest'
import type { BackendHarness, StoreUnderTest } from './backend-harness.ts'
import { appendConversation, eventsJson, nextRequestJson } from './contract-events.ts'
import { startContractChild } from './contract-process.ts'
import type { ContractChild } from './contract-process.ts'
import { retryWhileLocked, stopInsideTransaction } from './contract-waits.ts'

/** Events in the large-session case, appended and flushed in steps of {@link STEP}. */
export const LARGE_SESSION_EVENTS = 100_000
const STEP = 5_000
/** Events of the flush a writer is killed in (2,000 bytes each: about 40 MB, long enough to be caught inside). */
const FLOOD_EVENTS = 20_000
/** Tries at stopping a writer inside its flush transaction before the case fails. */
const MID_FLUSH_ATTEMPTS = 5
/** Events of 4 kB in the torn write: 12 MB, more than SQLite's page cache, so its uncommitted pages reach the WAL. */
const TORN_EVENTS = 3_000

const noRepair = () => {}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise
  } catch (error) {
    if (SessionError.isInstance(error)) return error.code
    throw error
  }
  return 'OK'
}

/**
 * Registers the contract every `SessionBackend` keeps as vitest `describe` blocks, run against
 * the stores `harness` makes. The multi-process cases are registered only for a harness whose
 * stores a child process can open (`multiProcess`), the second-store case only for one whose
 * stores share storage (`sharedStorage`): the memory store has neither.
 */
export function describeBackendContract(name: string, harness: BackendHarness): void {
  describe(`SessionBackend contract: ${name}`, () => {
    let store: StoreUnderTest | undefined
    const children: ContractChild[] = []
    const held: [SessionBackend, Session][] = []
    const fresh = async () => (store = await harness.fresh())
    const open = async (backend: SessionBackend, id: string) => {
      const session = await backend.open(id, { repairTornTail: true }, noRepair)
      held.push([backend, session])
      return session
    }
    const startChild = async (sut: StoreUnderTest) => {
      if (!sut.child) throw new Error(`${name}: the harness says multiProcess but its store has no child spec`)
      const child = await startContractChild(sut.child)
      children.push(child)
      return child
    }
    afterEach(async () => {
      for (const child of children.splice(0)) await child.kill()
      for (const [backend, session] of held.splice(0)) if (!session.isClosed) await backend.release(session)
      await store?.cleanup()
      store = undefined
    })

    it('create, list, EXISTS and NOT_FOUND', async () => {
      const backend = (await fresh()).backend()
      for (const id of ['b', 'a', 'c']) await backend.release(await backend.create(id, {}))
      expect(await backend.list()).toEqual(['a', 'b', 'c'])
      expect(await codeOf(backend.create('a', {}))).toBe('EXISTS')
      expect(await codeOf(backend.open('missing', {}, noRepair))).toBe('NOT_FOUND')
    })

    it('delete, when the backend has it: the session and its events go, and its id is free again', async () => {
      const backend = (await fresh()).backend()
      if (harness.deletes === false) return
      expect(typeof backend.delete, `${name} implements SessionBackend.delete`).toBe('function')
      await backend.release(await backend.create('kept', {}))
      const session = await backend.create('half-made', {})
      appendConversation(session, 0)
      await backend.flush(session)
      await backend.delete!(session)
      expect(session.isClosed).toBe(true)
      expect(await backend.list()).toEqual(['kept'])
      expect(await codeOf(backend.read('half-made'))).toBe('NOT_FOUND')
      expect(await codeOf(backend.delete!(session))).toBe('CLOSED')
      const again = await backend.create('half-made', {})
      held.push([backend, again])
      expect(again.length).toBe(0)
    })

    it('append, flush, reopen: byte-identical events and the same next request', async () => {
      const sut = await fresh()
      const backend = sut.backend()
      const session = await backend.create('s', {})
      appendConversation(session, 0)
      await backend.flush(session)
      appendConversation(session, 1)
      const events = eventsJson(session)
      const request = nextRequestJson(session)
      await backend.release(session)
      const reopened = await open(sut.backend(), 's')
      expect(eventsJson(reopened)).toEqual(events)
      expect(nextRequestJson(reopened)).toBe(request)
      // Resume: the next turn appended to the reopened session builds the same request as on the original.
      reopened.append('user/message', { message: createUserMessage('Continue.', 'next') }, 'append')
      expect(JSON.parse(nextRequestJson(reopened)).messages.slice(0, -1)).toEqual(JSON.parse(request).messages)
    })

    it(
      'read: the flushed events of a session another store holds, without holding it; the writer goes on ' +
        'undisturbed',
      async () => {
        const sut = await fresh()
        const writer = sut.backend()
        const session = await writer.create('r', {})
        appendConversation(session, 0)
        await writer.flush(session)
        const flushed = eventsJson(session)
        session.append('user/message', { message: createUserMessage('not flushed yet', 'later') }, 'append')
        // A store of its own where there is one (the memory store has one instance and no flush to wait for).
        const reader = sut.sharedStorage ? sut.backend() : writer
        const read = await reader.read('r')
        expect(eventsJson(read).slice(0, flushed.length)).toEqual(flushed)
        if (sut.sharedStorage) expect(read.length).toBe(flushed.length)
        expect(read.isClosed).toBe(true)
        expect(() => read.append('user/message', { message: createUserMessage('x', 'x') }, 'append')).toThrow()
        expect(await codeOf(reader.read('missing'))).toBe('NOT_FOUND')
        // The writer still holds the session: it flushes on, and a reopen has everything.
        appendConversation(session, 1)
        const all = eventsJson(session)
        await writer.release(session)
        expect(eventsJson(await open(sut.backend(), 'r'))).toEqual(all)
      },
    )

    it(`${LARGE_SESSION_EVENTS} events flushed in steps of ${STEP} reopen whole`, { timeout: 120_000 }, async () => {
      const sut = await fresh()
      const backend = sut.backend()
      const session = await backend.create('large', {})
      for (let seq = 0; seq < LARGE_SESSION_EVENTS; seq++) {
        session.append('user/message', { message: createUserMessage(`event ${seq}`, `m${seq}`) }, 'append')
        if ((seq + 1) % STEP === 0) await backend.flush(session)
      }
      const last = JSON.stringify(session.eventAt(LARGE_SESSION_EVENTS - 1))
      await backend.release(session)
      const reopened = await open(sut.backend(), 'large')
      expect(reopened.length).toBe(LARGE_SESSION_EVENTS)
      expect(JSON.stringify(reopened.eventAt(LARGE_SESSION_EVENTS - 1))).toBe(last)
    })

    if (harness.tornWrites)
      it(
        'a torn write (a writer that crashed mid-flush) leaves what was acknowledged intact; the session reopens ' +
          'and goes on gap-free',
        { timeout: 60_000 },
        async () => {
          const sut = await fresh()
          if (!sut.tornWrite) throw new Error(`${name}: the harness says tornWrites but its store has no tornWrite`)
          const backend = sut.backend()
          const session = await backend.create('t', {})
          appendConversation(session, 0)
          const acknowledged = eventsJson(session)
          await backend.release(session)
          // The flush the crash cut short: the events that would have come next, as the store writes them.
          const next = new Session('t', {})
          for (const event of session.events) next.restore(event)
          for (let index = 0; index < TORN_EVENTS; index++)
            next.append(
              'user/message',
              { message: createUserMessage(`${index} ${'y'.repeat(4000)}`, `torn-${index}`) },
              'append',
            )
          const torn = eventsJson(next).slice(acknowledged.length)
          const mayKeep = await sut.tornWrite(session.id, acknowledged.length, torn)

          const reader = sut.backend()
          const reopened = await open(reader, 't')
          const found = eventsJson(reopened)
          expect(found.slice(0, acknowledged.length)).toEqual(acknowledged)
          // At most the complete part of what was torn, never a changed or partial event.
          const kept = found.slice(acknowledged.length)
          expect(kept.length).toBeLessThan(torn.length)
          expect(kept).toEqual(torn.slice(0, kept.length))
          if (mayKeep === 'none') expect(kept).toEqual([])
          reopened.append('user/message', { message: createUserMessage('after the crash', 'after') }, 'append')
          const resumed = eventsJson(reopened)
          await reader.release(reopened)
          expect(eventsJson(await open(sut.backend(), 't'))).toEqual(resumed)
        },
      )

    if (harness.sharedStorage)
      it('a second store on the same storage is refused with LOCKED until the first releases', async () => {
        const sut = await fresh()
        const first = sut.backend()
        const session = await first.create('w', {})
        expect(await codeOf(sut.backend().open('w', {}, noRepair))).toBe('LOCKED')
        await first.release(session)
        await open(sut.backend(), 'w')
      })

    if (harness.multiProcess)
      describe('between processes', () => {
        it(
          'a writer in another process gets LOCKED; after its kill -9 the session opens again',
          { timeout: 90_000 },
          async () => {
            const sut = await fresh()
            const backend = sut.backend()
            await backend.release(await backend.create('p', {}))
            const holder = await startChild(sut)
            expect(await holder.ask({ op: 'hold', id: 'p' })).toEqual({ ok: true })
            const contender = await startChild(sut)
            expect((await contender.ask({ op: 'try-open', id: 'p' })).code).toBe('LOCKED')
            expect(await codeOf(backend.open('p', {}, noRepair))).toBe('LOCKED')
            await holder.kill()
            const reply = await retryWhileLocked(async () => {
              const answer = await contender.ask({ op: 'try-open', id: 'p' })
              if (answer.code === 'LOCKED') throw new SessionError('LOCKED', String(answer.message))
              return answer
            }, sut.takeoverMs)
            expect(reply).toEqual({ ok: true })
          },
        )

        const proof = harness.midFlushProbe
          ? 'the writer is stopped inside its uncommitted flush transaction, then killed: a reopen shows the ' +
            'earlier flushes and none of that one'
          : 'kill -9 in the middle of a large flush: a reopen shows the earlier flushes and all or none of that one'
        it(proof, { timeout: 180_000 }, async () => {
          const sut = await fresh()
          const backend = sut.backend()
          for (let attempt = 1; ; attempt++) {
            const id = `k${attempt}`
            const session = await backend.create(id, {})
            appendConversation(session, 0)
            const acknowledged = eventsJson(session)
            await backend.release(session)
            const writer = await startChild(sut)
            expect(await writer.ask({ op: 'flood', id, count: FLOOD_EVENTS, bytes: 2000 })).toEqual({ flushing: true })
            const inside = sut.writeInProgress
              ? await stopInsideTransaction(writer, () => (sut.writeInProgress as () => Promise<boolean>)())
              : false
            await writer.kill()
            const reader = sut.backend()
            const reopened = await retryWhileLocked(
              () => reader.open(id, { repairTornTail: true }, noRepair),
              sut.takeoverMs,
            )
            held.push([reader, reopened])
            expect(eventsJson(reopened).slice(0, acknowledged.length)).toEqual(acknowledged)
            if (inside) return expect(reopened.length).toBe(acknowledged.length)
            expect([acknowledged.length, acknowledged.length + FLOOD_EVENTS]).toContain(reopened.length)
            if (!sut.writeInProgress) return
            // The flush committed before the writer could be stopped inside it: try a new session.
            if (attempt === MID_FLUSH_ATTEMPTS)
              throw new Error(
                `${name}: in ${attempt} attempts the writer was never caught inside its flush transaction`,
              )
          }
        })
      })
  })
}
