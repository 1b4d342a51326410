import { Context } from '@cordisjs/core'
import { SessionStore } from '@warmfold/session'
import { describe, expect, it } from 'vitest'
import { main } from '../examples/usage.ts'
import { postgresSessionStore } from '../src/index.ts'
import { freshDatabase } from './pg-fixtures.ts'

describe('README example runs', () => {
  it('usage: keeps a flushed session in PostgreSQL, which another context reopens', async () => {
    const url = await freshDatabase()
    const id = await main(url)
    const ctx = new Context()
    await ctx.start()
    ctx.plugin(SessionStore, { store: postgresSessionStore({ url }) })
    const session = await ctx.sessions.open(id)
    expect(session.events.map((event) => event.type)).toEqual(['user/message'])
    await ctx.sessions.closeAll()
    await ctx.stop()
  })
})
