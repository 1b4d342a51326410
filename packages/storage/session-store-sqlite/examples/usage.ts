import { Context } from '@cordisjs/core'
import { createUserMessage } from '@warmfold/llm'
import { SessionStore } from '@warmfold/session'
import { sqliteSessionStore } from '@warmfold/session-store-sqlite'

export async function main(path = '.warmfold/sessions.db') {
  const ctx = new Context()
  await ctx.start()
  ctx.plugin(SessionStore, { store: sqliteSessionStore({ path }) })
  const session = await ctx.sessions.create()
  session.append('user/message', { message: createUserMessage('Refactor the loader.') }, 'append')
  await ctx.sessions.flush(session) // one committed transaction: durable from here on
  await ctx.sessions.closeAll()
  await ctx.stop()
  return session.id
}
