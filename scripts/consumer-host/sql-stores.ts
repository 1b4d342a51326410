// The SQL session stores as a host gets them from npm: each is one config line, keeps a session
// across two contexts, and lets a third reader read it while a context holds it.
import { randomUUID } from 'node:crypto'
import { Context } from '@cordisjs/core'
import { createUserMessage, textOf } from '@warmfold/llm'
import type { SessionBackend } from '@warmfold/session'
import { SessionStore } from '@warmfold/session'
import { postgresSessionStore } from '@warmfold/session-store-postgres'
import { sqliteSessionStore } from '@warmfold/session-store-sqlite'

type Check = (name: string, ok: boolean, detail?: string) => void

/** Runs the rounds against the SQLite file at `path` and the PostgreSQL database at `postgresUrl`. */
export async function checkSqlStores(check: Check, path: string, postgresUrl: string): Promise<void> {
  await checkStore(check, 'SQLite', () => sqliteSessionStore({ path }))
  const pools: { close(): Promise<void> }[] = []
  await checkStore(check, 'PostgreSQL', () => {
    const store = postgresSessionStore({ url: postgresUrl })
    pools.push(store)
    return store
  })
  await Promise.all(pools.map((pool) => pool.close()))
}

async function checkStore(check: Check, name: string, store: () => SessionBackend): Promise<void> {
  const id = `sql-${randomUUID().slice(0, 8)}`
  for (const round of [1, 2]) {
    const ctx = new Context()
    await ctx.start()
    ctx.plugin(SessionStore, { store: store() })
    if (round === 1) {
      const session = await ctx.sessions.create(id)
      session.append('user/message', { message: createUserMessage('Refactor the loader.', 'm1') }, 'append')
      await ctx.sessions.flush(session)
      // Another context reads it while this one holds it.
      const reader = new Context()
      await reader.start()
      reader.plugin(SessionStore, { store: store() })
      const read = await reader.sessions.read(id)
      check(
        `the ${name} session store reads a held session without taking it`,
        read.length === 1 && read.isClosed,
        `${read.length} event(s)`,
      )
      await reader.stop()
      await ctx.sessions.close(session)
    } else {
      const reopened = await ctx.sessions.open(id)
      check(
        `the ${name} session store keeps a session across contexts`,
        reopened.length === 1 && textOf(reopened.deriveMessages()[0]!.content) === 'Refactor the loader.',
        `${reopened.length} event(s)`,
      )
      await ctx.sessions.close(reopened)
    }
    await ctx.stop()
  }
}
