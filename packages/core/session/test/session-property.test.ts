import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { canonicalJson } from '@warmfold/llm'
import { createTestContext } from '@warmfold/test-utils'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Session, SessionStore } from '../src/index.ts'
import { applyOperations, operations } from './session-fixtures.ts'

let directory: string
beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'warmfold-session-'))
})
afterAll(async () => {
  await rm(directory, { recursive: true, force: true })
})

describe('session surface properties', () => {
  it('keeps surface invariants over random append/replace sequences', () => {
    fc.assert(
      fc.property(operations, (list) => {
        const session = new Session('p')
        applyOperations(session, list)
        const nodes = session.surface.nodes
        // Every node is a distinct surface event.
        expect(new Set(nodes).size).toBe(nodes.length)
        for (const seq of nodes) expect(session.eventAt(seq)?.surface).toBeDefined()
        // Every shadowed seq is still in the log, unchanged.
        const shadowed = session.events
          .filter((event) => event.surface?.op === 'replace')
          .flatMap((event) => (event.surface as { sourceEventSeqs: readonly number[] }).sourceEventSeqs)
        for (const seq of shadowed) expect(session.eventAt(seq)?.seq).toBe(seq)
        // The surface is exactly what replaying the intents gives.
        const replayed: number[] = []
        for (const event of session.events) {
          if (!event.surface) continue
          if (event.surface.op === 'append') replayed.push(event.seq)
          else
            replayed.splice(
              event.surface.start,
              event.surface.end - event.surface.start + 1,
              event.seq,
              ...(event.surface.keep ?? []),
            )
        }
        expect(nodes).toEqual(replayed)
        expect(session.surface.replaceGeneration).toBe(
          session.events.filter((event) => event.surface?.op === 'replace').length,
        )
        // deriveMessages is the per-node projection, and deterministic.
        expect(session.deriveMessages()).toEqual(nodes.map((seq) => session.deriveEventMessage(session.eventAt(seq)!)))
        const again = new Session('p')
        applyOperations(again, list)
        expect(canonicalJson(again.deriveMessages())).toBe(canonicalJson(session.deriveMessages()))
      }),
      { numRuns: 150 },
    )
  })

  it('reopens from the file store in a fresh Context with byte-identical messages and header', async () => {
    let run = 0
    await fc.assert(
      fc.asyncProperty(operations, async (list) => {
        const id = `prop-${run++}`
        const writer = await createTestContext()
        writer.ctx.plugin(SessionStore, { store: 'file', directory })
        const session = await writer.ctx.sessions.create(id)
        applyOperations(session, list)
        const messages = canonicalJson(session.deriveMessages())
        const header = canonicalJson(session.requestHeader() ?? null)
        await writer.ctx.sessions.flush(session)
        await writer.dispose()
        writer.assertClean()

        const reader = await createTestContext()
        reader.ctx.plugin(SessionStore, { store: 'file', directory })
        const reopened = await reader.ctx.sessions.open(id)
        expect(canonicalJson(reopened.deriveMessages())).toBe(messages)
        expect(canonicalJson(reopened.requestHeader() ?? null)).toBe(header)
        expect(canonicalJson(reopened.events)).toBe(canonicalJson(session.events))
        await reader.dispose()
        reader.assertClean()
      }),
      { numRuns: 40 },
    )
  })
})
