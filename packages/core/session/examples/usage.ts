import { Context } from '@cordisjs/core'
import { createUserMessage } from '@warmfold/llm'
import { SessionStore } from '@warmfold/session'

export async function main(directory = '.warmfold/sessions') {
  const ctx = new Context()
  await ctx.start()
  ctx.plugin(SessionStore, { store: 'file', directory })

  const session = await ctx.sessions.create('my-session')
  const event = session.append('user/message', { message: createUserMessage('Fix the failing test.') }, 'append')
  // event: { seq: 0, type: 'user/message', data: { message }, surface: { op: 'append' }, time }
  const messages = session.deriveMessages() // what the next request carries
  await ctx.sessions.flush(session) // durable (fsync'd) from here on
  await ctx.stop() // unloading the store closes the file and releases its lock
  return { event, messages }
}
