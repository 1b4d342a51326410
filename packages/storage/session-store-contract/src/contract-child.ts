// A writer process for the multi-process contract cases. It builds a backend from a
// ChildBackendSpec and answers one command per IPC message:
//   { op: 'hold', id }                    open the session and keep it; reply { ok: true }
//   { op: 'flood', id, count, bytes }     open, append `count` events of `bytes` each, reply
//                                         { flushing: true }, flush, reply { flushed: true }
//   { op: 'try-open', id }                open and release; reply { ok } or { code, message }
//   { op: 'contend', id, count }          open, retrying while LOCKED, append `count` events with a
//                                         flush after each, release; reply { refusals, appendMs }
import { createUserMessage } from '@warmfold/llm'
import type { SessionBackend } from '@warmfold/session'
import { SessionError } from '@warmfold/session'
import type { ChildBackendSpec } from './backend-harness.ts'

interface Command {
  readonly op: 'hold' | 'flood' | 'try-open' | 'contend'
  readonly id: string
  readonly count?: number
  readonly bytes?: number
}

const send = (message: unknown) => new Promise<void>((done) => process.send?.(message, () => done()))
const spec = JSON.parse(process.argv[2] as string) as ChildBackendSpec
const loaded = (await import(spec.module)) as Record<
  string,
  ((...args: unknown[]) => SessionBackend) & (new (...args: unknown[]) => SessionBackend)
>
const factory = loaded[spec.factory]
if (typeof factory !== 'function') throw new Error(`contract child: ${spec.module} has no export ${spec.factory}`)
const backend = spec.construct === true ? new factory(...spec.args) : factory(...spec.args)

process.on('message', (command: Command) => {
  void run(command).catch((error: unknown) =>
    send({ code: SessionError.isInstance(error) ? error.code : 'ERROR', message: (error as Error).message }),
  )
})
await send({ ready: true })

async function run(command: Command): Promise<void> {
  if (command.op === 'contend') return contend(command.id, command.count ?? 0)
  const session = await backend.open(command.id, {}, () => {})
  if (command.op === 'try-open') {
    await backend.release(session)
    return send({ ok: true })
  }
  if (command.op === 'hold') return send({ ok: true })
  const text = 'x'.repeat(command.bytes ?? 1000)
  for (let index = 0; index < (command.count ?? 0); index++)
    session.append('user/message', { message: createUserMessage(`${index} ${text}`, `flood-${index}`) }, 'append')
  await send({ flushing: true })
  await backend.flush(session)
  await send({ flushed: true })
}

/** The contention bench's writer: wait out the other writer's hold, then append and flush one by one. */
async function contend(id: string, count: number): Promise<void> {
  let refusals = 0
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
  const started = performance.now()
  for (let index = 0; index < count; index++) {
    session.append(
      'user/message',
      { message: createUserMessage(`${process.pid} ${index}`, `${process.pid}-${index}`) },
      'append',
    )
    await backend.flush(session)
  }
  const appendMs = performance.now() - started
  await backend.release(session)
  await send({ refusals, appendMs })
}
