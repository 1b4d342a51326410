import {
  createAssistantMessage,
  createToolResultMessage,
  createUserMessage,
  textBlock,
  toolCallBlock,
} from '@warmfold/llm'
import { Session } from '@warmfold/session'
import { createTestContext } from '@warmfold/test-utils'
import type { TestContext } from '@warmfold/test-utils'
import { afterAll, bench, describe } from 'vitest'
import { TokenMeter } from '../src/index.ts'

/**
 * Appends one event shaped like a tool session: an assistant call with usage, its tool result,
 * a user note. Every assistant message carries usage, so the anchor is moved on each cycle.
 */
function appendEvent(session: Session, index: number): void {
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
          usage: { inputTokens: 100, cacheReadTokens: 20 * index, outputTokens: 30 },
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
}

let test: TestContext | undefined
afterAll(async () => {
  await test?.dispose()
  test?.assertClean()
})

describe('measure() after one new event', () => {
  for (const size of [1_000, 10_000, 100_000]) {
    let session: Session | undefined
    let meter: TokenMeter | undefined
    let next = 0
    bench(
      `session of ${size} events`,
      () => {
        appendEvent(session!, next++)
        meter!.measure(session!)
      },
      {
        iterations: 2000,
        time: 0,
        warmupIterations: 100,
        setup: async () => {
          if (session) return
          test ??= await createTestContext()
          if (!test.ctx.get('tokenMeter')) test.ctx.plugin(TokenMeter, {})
          meter = test.ctx.tokenMeter
          session = new Session(`bench-${size}`)
          session.append('request/header', {
            header: {
              config: { provider: 'p', model: 'm', reasoningEffort: 'high' },
              system: 'You are a coding agent.',
            },
            reason: 'initial',
          })
          for (next = 1; next < size; next++) appendEvent(session, next)
          // Warm the meter's state once; every iteration then pays only for its one new event.
          meter.measure(session)
        },
      },
    )
  }
})
