import { Context } from '@cordisjs/core'
import { createUserMessage } from '@warmfold/llm'
import { SessionStore } from '@warmfold/session'
import { postgresSessionStore } from '@warmfold/session-store-postgres'

export async function main(url = process.env.DATABASE_URL!) {
  const ctx = new Context()
  await ctx.start()
  ctx.plugin(SessionStore, { store: postgresSessionStore({ url }) })
  const session = await ctx.sessions.create()
  session.append('user/message', { message: createUserMessage('Refactor the loader.') }, 'append')
  await ctx.sessions.flush(session) // one committed transaction, under this host's lease
  // Releases are asynchronous: await them before unloading.
  await ctx.sessions.closeAll()
  await ctx.stop()
  return session.id
}
