/**
 * One writer of the contention bench, run as its own process (forked with IPC). On `go` it
 * opens session `id` in `directory`, retrying while the store refuses it with LOCKED, then
 * appends `count` events with a flush (write + fsync) after each, closes, and reports
 * `{ refusals, appendMs, openWaitMs }`. Any other failure is reported as `{ error }`.
 */
import { createUserMessage } from '@warmfold/llm'
import { JsonlFileBackend, SessionError } from '../src/index.ts'

interface Go {
  directory: string
  id: string
  count: number
  name: string
}

process.once('message', (go: Go) => {
  void run(go).then(
    (report) => process.send?.(report),
    (error: unknown) => process.send?.({ error: error instanceof Error ? error.stack : String(error) }),
  )
})
process.send?.({ ready: true })

async function run({ directory, id, count, name }: Go): Promise<unknown> {
  const backend = new JsonlFileBackend(directory)
  let refusals = 0
  const waitStart = performance.now()
  let session
  while (!session) {
    try {
      session = await backend.open(id, {}, () => {})
    } catch (error) {
      if (!SessionError.isInstance(error) || error.code !== 'LOCKED') throw error
      refusals += 1
      await new Promise((done) => setTimeout(done, 2))
    }
  }
  const openWaitMs = performance.now() - waitStart
  const start = performance.now()
  for (let index = 0; index < count; index++) {
    session.append(
      'user/message',
      { message: createUserMessage(`${name} event ${index}`, `${name}-${index}`) },
      'append',
    )
    await backend.flush(session)
  }
  const appendMs = performance.now() - start
  backend.releaseSync(session)
  return { refusals, appendMs, openWaitMs }
}
