import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SessionStore } from '@warmfold/session'
import type { TestContext } from '@warmfold/test-utils'
import { createTestContext } from '@warmfold/test-utils'
import type { ModelMessage } from 'ai'
import { generateText, jsonSchema, stepCountIs, tool, wrapLanguageModel } from 'ai'
import { afterEach, describe, expect, it } from 'vitest'
import type { FoldReport } from '../src/index.ts'
import { sessionFoldStore, warmfoldMiddleware } from '../src/index.ts'
import { ScriptedProvider } from './scripted-provider.ts'

const readTool = tool({
  description: 'Read a file',
  inputSchema: jsonSchema<{ path: string }>({
    type: 'object',
    properties: { path: { type: 'string' } },
    required: ['path'],
  }),
  execute: async ({ path }) => `// ${path}\n${'export const value = 1\n'.repeat(60)}`,
})

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).toReversed()) await cleanup()
})

/** A host process: a cordis context with the JSONL file session store in `directory`. */
async function hostProcess(directory: string): Promise<TestContext> {
  const test = await createTestContext()
  test.ctx.plugin(SessionStore, { store: 'file', directory })
  await test.ctx.inject(['sessions'], async () => {})
  cleanups.push(async () => {
    test.assertClean()
    await test.dispose()
  })
  return test
}

describe('sessionFoldStore', { timeout: 30_000 }, () => {
  it('keeps folds in a warmfold session log on disk: after a restart, the re-sent history gets the same checkpoint without a new summary call', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'warmfold-ai-sdk-'))
    cleanups.push(() => rm(directory, { recursive: true, force: true }))
    const provider = await ScriptedProvider.start('openai-compatible', 20)
    cleanups.push(() => provider.close())
    const history: ModelMessage[] = [{ role: 'user', content: 'Read the files.' }]

    const first = await hostProcess(directory)
    const session = await first.ctx.sessions.create('agent-1')
    const folds: FoldReport[] = []
    const model = wrapLanguageModel({
      model: provider.model(),
      middleware: warmfoldMiddleware({
        contextWindow: 6_000,
        store: sessionFoldStore(session, () => first.ctx.sessions.flush(session)),
        onFold: (fold) => folds.push(fold),
      }),
    })
    const turn = await generateText({
      model,
      system: 'You are a coding agent.',
      messages: history,
      tools: { read_file: readTool },
      stopWhen: stepCountIs(30),
    })
    expect(turn.text).toBe('done')
    expect(folds.filter((fold) => fold.committed).length).toBeGreaterThan(0)
    const lastRequest = provider.requests.at(-1)!.recorded.json.messages as unknown[]
    // On disk, one line per fold.
    const lines = (await readFile(join(directory, 'agent-1.jsonl'), 'utf8')).trim().split('\n')
    expect(lines.filter((line) => line.includes('"ai-sdk/fold"'))).toHaveLength(folds.length)
    await first.dispose()
    cleanups.pop()

    // A new process: a new middleware over the reopened session log.
    const second = await hostProcess(directory)
    const reopened = await second.ctx.sessions.open('agent-1')
    const laterFolds: FoldReport[] = []
    const restarted = wrapLanguageModel({
      model: provider.model(),
      middleware: warmfoldMiddleware({
        contextWindow: 6_000,
        store: sessionFoldStore(reopened, () => second.ctx.sessions.flush(reopened)),
        onFold: (fold) => laterFolds.push(fold),
      }),
    })
    history.push(...turn.response.messages, { role: 'user', content: 'Thanks.' })
    const before = provider.requests.length
    await generateText({
      model: restarted,
      system: 'You are a coding agent.',
      messages: history,
      tools: { read_file: readTool },
      stopWhen: stepCountIs(2),
    })
    expect(laterFolds.map((fold) => fold.refusal)).toEqual([])
    expect(provider.requests.slice(before).every((request) => !request.summary)).toBe(true)
    const next = provider.requests[before]!.recorded.json.messages as unknown[]
    expect(JSON.stringify(next.slice(0, lastRequest.length))).toBe(JSON.stringify(lastRequest))
  })
})
