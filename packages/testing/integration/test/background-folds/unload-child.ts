// A host process for `unload-exit.test.ts`: `node --import tsx unload-child.ts <baseURL> <directory>`.
// It mounts the stalling host against the server at <baseURL> (the test's), runs one turn, which
// ends once the background fold's summary request has reached the server (the server answers the
// conversation then; the summary call stalls), stops the context and returns. It must then exit
// by itself, with code 0: a request or timer left running would keep it alive.
/* oxlint-disable no-console */
import { Context } from '@cordisjs/core'
import { AGENT_OPTIONS, foldBrackets, mountStallingHost, SESSION_ID } from './stalling-host.ts'

const [baseURL, directory] = process.argv.slice(2)
if (!baseURL || !directory) throw new Error('usage: unload-child.ts <baseURL> <directory>')

const ctx = new Context()
// Reported problems fail the process (exit code 1) and are printed for the test.
ctx.on('internal/warning', (...args: unknown[]) => {
  console.error('internal/warning', ...args)
  process.exitCode = 1
})
ctx.on('internal/error', (...args: unknown[]) => {
  console.error('internal/error', ...args)
  process.exitCode = 1
})
await ctx.start()
mountStallingHost(ctx, { baseURL, directory })
await ctx.events.flush()
const agent = await ctx.agentLoop.create(SESSION_ID, AGENT_OPTIONS)
const result = await agent.followup('Read the project.')
const open = foldBrackets(agent.session.events).filter((bracket) => !bracket.end)
console.log(JSON.stringify({ turn: result.reason, openFolds: open.map((bracket) => bracket.trigger) }))
await ctx.stop()
console.log(JSON.stringify({ stopped: true }))
