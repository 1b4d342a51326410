import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Context } from '@cordisjs/core'
import { SessionStore } from '@warmfold/session'
import { describe, expect, it } from 'vitest'
import { main } from '../examples/usage.ts'
import { sqliteSessionStore } from '../src/index.ts'

describe('README example runs', () => {
  it('usage: keeps a flushed session in the SQLite file, which another context reopens', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'warmfold-sqlite-example-'))
    try {
      const path = join(directory, 'sessions.db')
      const id = await main(path)
      const ctx = new Context()
      await ctx.start()
      ctx.plugin(SessionStore, { store: sqliteSessionStore({ path }) })
      const session = await ctx.sessions.open(id)
      expect(session.events.map((event) => event.type)).toEqual(['user/message'])
      await ctx.sessions.closeAll()
      await ctx.stop()
    } finally {
      await rm(directory, { recursive: true, force: true })
    }
  })
})
