import { Context } from '@cordisjs/core'
import { createAssistantMessage, createToolResultMessage, createUserMessage, toolCallBlock } from '@warmfold/llm'
import { SessionStore } from '@warmfold/session'

// A package adds its own typed events by declaration merging. Events that are not surface
// events are log-only: they carry no surface intent and never reach a prompt.
declare module '@warmfold/session' {
  interface SessionEventMap {
    'my-plugin/shorten': { shadowedSeqs: number[]; savedCharacters: number }
  }
}

export async function main() {
  const ctx = new Context()
  await ctx.start()
  ctx.plugin(SessionStore, { store: 'memory' })

  const session = await ctx.sessions.create('shorten-demo')
  session.append('user/message', { message: createUserMessage('List the files.') }, 'append')
  const call = toolCallBlock('call-1', 'list', '{}')
  session.append(
    'assistant/message',
    { message: createAssistantMessage([call], { provider: 'deepseek', model: 'deepseek-v4-flash' }) },
    'append',
  )
  const listing = 'src/file.ts\n'.repeat(500)
  const original = session.append(
    'tool/result',
    { message: createToolResultMessage('call-1', listing), toolName: 'list' },
    'append',
  )

  // Replace the long result with a short one. The pricing event and the replacement are only
  // valid together, so they are one unit: a store writes both or neither.
  const position = session.surface.nodes.indexOf(original.seq)
  const short = '500 files under src/'
  const [pricing, replacement] = session.unit(() => [
    session.append('my-plugin/shorten', {
      shadowedSeqs: [original.seq],
      savedCharacters: listing.length - short.length,
    }),
    session.append(
      'tool/result',
      { message: createToolResultMessage('call-1', short), toolName: 'list' },
      { op: 'replace', start: position, end: position, sourceEventSeqs: [original.seq] },
    ),
  ])

  const result = {
    pricing, // { seq: 3, type: 'my-plugin/shorten', data, time }: no `surface`, log-only
    replacement, // { seq: 4, type: 'tool/result', data, surface: { op: 'replace', start: 2, end: 2, sourceEventSeqs: [2] }, time }
    surface: session.surface, // { nodes: [0, 1, 4], replaceGeneration: 1 }
    kept: session.eventAt(original.seq) === original, // true: the original stays in the log
  }
  await ctx.stop()
  return result
}
