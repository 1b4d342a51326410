import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Context } from '@cordisjs/core'
import { canonicalJson } from '@warmfold/llm'
import { SessionStore } from '@warmfold/session'
import { sqliteSessionStore } from '@warmfold/session-store-sqlite'
import { describe, expect, it } from 'vitest'
import { runWorkload } from '../src/index.ts'

describe('runWorkload sessionFile', () => {
  it('keeps the session as <directory>/<id>.jsonl, event for event, and never resumes an existing file', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'warmfold-workload-session-'))
    try {
      const run = await runWorkload({ window: 8000, steps: 30 }, { sessionFile: { directory, id: 'kept-8000' } })
      expect(run.completed).toBe(true)
      expect(run.session.id).toBe('kept-8000')
      expect(run.summaryCalls.length).toBeGreaterThan(0)
      const lines = (await readFile(join(directory, 'kept-8000.jsonl'), 'utf8')).trimEnd().split('\n')
      expect(lines).toHaveLength(run.session.length)
      const ctx = new Context()
      await ctx.start()
      try {
        ctx.plugin(SessionStore, { store: 'file', directory })
        const reopened = await ctx.sessions.open('kept-8000')
        expect(reopened.events.map((event) => canonicalJson(event))).toEqual(
          run.session.events.map((event) => canonicalJson(event)),
        )
      } finally {
        await ctx.stop()
      }
      // A second run with the same file would append a second session to the first: refused.
      await expect(
        runWorkload({ window: 8000, steps: 30 }, { sessionFile: { directory, id: 'kept-8000' } }),
      ).rejects.toMatchObject({ code: 'EXISTS' })
      expect((await readFile(join(directory, 'kept-8000.jsonl'), 'utf8')).trimEnd().split('\n')).toHaveLength(
        run.session.length,
      )
    } finally {
      await rm(directory, { recursive: true, force: true })
    }
  })
})

describe('runWorkload sessionStore', () => {
  it('keeps the session in an SQL store, event for event, flushed before the run returns', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'warmfold-workload-sqlite-'))
    const path = join(directory, 'sessions.db')
    try {
      const run = await runWorkload(
        { window: 8000, steps: 30 },
        { sessionStore: { store: sqliteSessionStore({ path }), id: 'kept-sql' } },
      )
      expect(run.completed).toBe(true)
      const ctx = new Context()
      await ctx.start()
      try {
        ctx.plugin(SessionStore, { store: sqliteSessionStore({ path }) })
        const reopened = await ctx.sessions.open('kept-sql')
        expect(reopened.events.map((event) => canonicalJson(event))).toEqual(
          run.session.events.map((event) => canonicalJson(event)),
        )
        await ctx.sessions.close(reopened)
      } finally {
        await ctx.stop()
      }
      await expect(
        runWorkload(
          { window: 8000, steps: 30 },
          { sessionStore: { store: sqliteSessionStore({ path }), id: 'kept-sql' } },
        ),
      ).rejects.toMatchObject({ code: 'EXISTS' })
    } finally {
      await rm(directory, { recursive: true, force: true })
    }
  })
})
