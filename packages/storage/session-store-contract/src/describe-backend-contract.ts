import { createUserMessage } from '@warmfold/llm'
import type { Session, SessionBackend } from '@warmfold/session'
import { SessionError } from '@warmfold/session'
import { afterEach, describe, expect, it } from 'vitest'
import type { BackendHarness, StoreUnderTest } from './backend-harness.ts'
import { appendConversation, eventsJson, nextRequestJson } from './contract-events.ts'
import { startContractChild } from './contract-process.ts'
import type { ContractChild } from './contract-process.ts'

/** Events in the large-session case, appended and flushed in steps of {@link STEP}. */
export const LARGE_SESSION_EVENTS = 100_000
const STEP = 5_000

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

    if (harness.sharedStorage) it('a second store on the same storage is refused with LOCKED until the first releases', async () => {
      const sut = await fresh()
      const first = sut.backend()
      const session = await first.create('w', {})
      expect(await codeOf(sut.backend().open('w', {}, noRepair))).toBe('LOCKED')
      await first.release(session)
      await open(sut.backend(), 'w')
    })

    if (harness.multiProcess) describe('between processes', () => {
      it('a writer in another process gets LOCKED; its kill -9 does not block the session', { timeout: 60_000 }, async () => {
        const sut = await fresh()
        if (!sut.child) throw new Error(`${name}: the harness says multiProcess but its store has no child spec`)
        const backend = sut.backend()
        await backend.release(await backend.create('p', {}))
        const spec = sut.child
        const holder = await startContractChild(spec)
        children.push(holder)
        expect(await holder.ask({ op: 'hold', id: 'p' })).toEqual({ ok: true })
        const contender = await startContractChild(spec)
        children.push(contender)
        expect((await contender.ask({ op: 'try-open', id: 'p' })).code).toBe('LOCKED')
        expect(await codeOf(backend.open('p', {}, noRepair))).toBe('LOCKED')
        await holder.kill()
        expect(await contender.ask({ op: 'try-open', id: 'p' })).toEqual({ ok: true })
      })

      it('kill -9 in the middle of a large flush: a reopen shows the earlier flushes and all or none of that one', { timeout: 60_000 }, async () => {
        const sut = await fresh()
        if (!sut.child) throw new Error(`${name}: the harness says multiProcess but its store has no child spec`)
        const backend = sut.backend()
        const session = await backend.create('k', {})
        appendConversation(session, 0)
        const acknowledged = eventsJson(session)
        await backend.release(session)
        const writer = await startContractChild(sut.child)
        children.push(writer)
        const count = 20_000
        expect(await writer.ask({ op: 'flood', id: 'k', count, bytes: 2000 })).toEqual({ flushing: true })
        await writer.kill()
        const reopened = await open(sut.backend(), 'k')
        expect(eventsJson(reopened).slice(0, acknowledged.length)).toEqual(acknowledged)
        expect([acknowledged.length, acknowledged.length + count]).toContain(reopened.length)
      })
    })
  })
}
