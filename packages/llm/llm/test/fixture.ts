import { createTestContext } from '@warmfold/test-utils'
import type { TestContext } from '@warmfold/test-utils'
import { expect } from 'vitest'
import type { GenerateOptions, LlmErrorCode, Message } from '../src/index.ts'
import { createUserMessage, LlmError, LlmRuntime } from '../src/index.ts'

/** A started test context with `LlmRuntime` mounted, so `ctx.llm` is ready. */
export async function mountRuntime(): Promise<TestContext> {
  const test = await createTestContext()
  test.ctx.plugin(LlmRuntime)
  return test
}

/** Fails on any recorded cordis warning or error, and always stops the context. */
export async function finish(test: TestContext): Promise<void> {
  try {
    test.assertClean()
  } finally {
    await test.dispose()
  }
}

/** A minimal request to `provider`/`model`, with `extra` fields merged in. */
export function request(provider: string, model: string, extra: Partial<GenerateOptions> = {}): GenerateOptions {
  const messages: Message[] = [createUserMessage('hello')]
  return { provider, model, messages, ...extra }
}

/** Runs `action`, expects it to fail with an `LlmError` of `code`, and returns the error. */
export async function expectLlmError(action: () => unknown, code: LlmErrorCode): Promise<LlmError> {
  let caught: unknown
  try {
    await action()
  } catch (error) {
    caught = error
  }
  expect(caught, 'expected the action to fail').toBeDefined()
  expect(LlmError.isInstance(caught), `expected an LlmError, got ${String(caught)}`).toBe(true)
  const error = caught as LlmError
  expect(error.code).toBe(code)
  return error
}

/** Paths of every object reachable from `value` (itself included) that is not frozen. */
export function unfrozenPaths(value: unknown): string[] {
  return objectsWithin(value)
    .filter(([, object]) => !Object.isFrozen(object))
    .map(([path]) => path)
}

/** Every object reachable from `value`, with its path, for deep-freeze checks. */
export function objectsWithin(value: unknown, path = '$'): Array<[string, object]> {
  if (value === null || typeof value !== 'object') return []
  const found: Array<[string, object]> = [[path, value]]
  for (const [key, child] of Object.entries(value)) found.push(...objectsWithin(child, `${path}.${key}`))
  return found
}
