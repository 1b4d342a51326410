import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  createAssistantMessage,
  createToolResultMessage,
  createUserMessage,
  textBlock,
  toolCallBlock,
} from '@warmfold/llm'
import { afterAll, bench, describe } from 'vitest'
import { JsonlFileBackend, Session } from '../src/index.ts'

const EVENTS = 100_000
const directory = mkdtempSync(join(tmpdir(), 'warmfold-session-bench-'))
afterAll(() => rmSync(directory, { recursive: true, force: true }))

/** Appends `count` events shaped like a tool session: assistant call, tool result, user note. */
function fill(session: Session, count: number, deriveEvery = 0): void {
  for (let index = 0; index < count; index++) {
    switch (index % 3) {
      case 0:
        session.append(
          'assistant/message',
          {
            message: createAssistantMessage(
              [textBlock(`step ${index}`), toolCallBlock(`c${index}`, 'read', `{"path":"src/file-${index}.ts"}`)],
              { provider: 'p', model: 'm' },
              `a${index}`,
            ),
          },
          'append',
        )
        break
      case 1:
        session.append(
          'tool/result',
          { message: createToolResultMessage(`c${index - 1}`, `contents of file ${index}`, { id: `r${index}` }) },
          'append',
        )
        break
      default:
        session.append('user/message', { message: createUserMessage(`note ${index}`, `u${index}`) }, 'append')
    }
    if (deriveEvery && index % deriveEvery === 0) session.deriveMessages()
  }
}

describe('session log', () => {
  bench(
    `append ${EVENTS} events, deriveMessages() after every 10th`,
    () => {
      fill(new Session('bench'), EVENTS, 10)
    },
    { iterations: 3, time: 0, warmupIterations: 1 },
  )
})

describe('JSONL file store', () => {
  let run = 0
  bench(
    'append 1000 events, flush after every 10th (fsync each flush)',
    async () => {
      const backend = new JsonlFileBackend(directory)
      const session = await backend.create(`flush-${run++}`, {})
      for (let batch = 0; batch < 100; batch++) {
        fill(session, 10)
        await backend.flush(session)
      }
      backend.releaseSync(session)
    },
    { iterations: 5, time: 0, warmupIterations: 1 },
  )

  bench(
    'append 1000 events, flush after every event (fsync each flush)',
    async () => {
      const backend = new JsonlFileBackend(directory)
      const session = await backend.create(`each-${run++}`, {})
      for (let event = 0; event < 1000; event++) {
        fill(session, 1)
        await backend.flush(session)
      }
      backend.releaseSync(session)
    },
    { iterations: 3, time: 0, warmupIterations: 1 },
  )

  const backend = new JsonlFileBackend(directory)
  let prepared = false
  bench(
    `open a ${EVENTS}-event session`,
    async () => {
      const session = await backend.open('big', {}, () => {})
      backend.releaseSync(session)
    },
    {
      iterations: 3,
      time: 0,
      warmupIterations: 0,
      setup: async () => {
        if (prepared) return
        prepared = true
        const session = await backend.create('big', {})
        fill(session, EVENTS)
        backend.releaseSync(session)
      },
    },
  )
})
