import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { textOf } from '@warmfold/llm'
import { recordCordisPrints } from '@warmfold/test-utils'
import { afterEach, describe, expect, it } from 'vitest'
import { main as forkTool } from '../examples/fork-tool.ts'
import { main as usage } from '../examples/usage.ts'

// The README shows this file verbatim (checked by test-utils' readme-examples test).
describe('README examples run', () => {
  const folders: string[] = []
  afterEach(async () => {
    for (const folder of folders.splice(0)) await rm(folder, { recursive: true, force: true })
  })

  it('usage: the model calls the read tool on a real file and answers; the turn is logged to the file store', async () => {
    const workspace = await mkdtemp(join(tmpdir(), 'warmfold-agent-example-'))
    folders.push(workspace)
    await mkdir(join(workspace, 'test'))
    const source = 'expect(add(2, 2)).toBe(4)\n'
    await writeFile(join(workspace, 'test/add.test.ts'), source)
    const directory = join(workspace, 'sessions')

    const { result, printed } = await recordCordisPrints(() => usage(workspace, directory))
    expect(printed).toEqual([])
    expect(result.lastError).toBeUndefined()
    expect(result.result).toEqual({ turn: 1, reason: 'stop', steps: 2 })
    expect(result.types).toEqual([
      'turn/start',
      'user/message',
      'request/header',
      'assistant/message',
      'tool/result',
      'assistant/message',
      'turn/end',
    ])
    expect(result.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user', 'assistant'])
    const toolResult = result.messages[2]!.content[0]
    expect(toolResult?.type === 'tool-result' && textOf(toolResult.content)).toBe(source)
    expect(textOf(result.messages[3]!.content)).toBe('The test expects add(2, 2) to be 4.')
  })
  it('fork-tool: the model delegates through a tool; the fork replays the parent request plus the task and its answer is the tool result', async () => {
    const { result, printed } = await recordCordisPrints(() => forkTool())
    expect(printed).toEqual([])
    expect(result.result).toEqual({ turn: 1, reason: 'stop', steps: 2 })
    expect(result.types).toEqual([
      'turn/start',
      'user/message',
      'request/header',
      'assistant/message',
      'agent/fork-start',
      'agent/fork-end',
      'tool/result',
      'assistant/message',
      'turn/end',
    ])
    const [parentFirst, forkFirst] = result.requests
    expect(forkFirst!.messages.slice(0, -1)).toEqual(parentFirst!.messages)
    expect(textOf(forkFirst!.messages.at(-1)!.content)).toBe('Which file defines add?')
    // Everything else is the parent's, and the fork sends the parent's cache session.
    const {
      messages: _forkMessages,
      sessionId: forkSession,
      cacheSessionId,
      cacheTtl,
      signal: _forkSignal,
      ...forkRest
    } = forkFirst!
    const { messages: _parentMessages, sessionId: parentSession, signal: _parentSignal, ...parentRest } = parentFirst!
    expect(forkRest).toEqual(parentRest)
    expect([forkSession, cacheSessionId, cacheTtl, parentSession]).toEqual([
      'session-1.fork-1',
      'session-1',
      'short',
      'session-1',
    ])
    const toolResult = result.messages[2]!.content[0]
    expect(toolResult?.type === 'tool-result' && textOf(toolResult.content)).toBe('src/add.ts defines add.')
    expect(textOf(result.messages[3]!.content)).toBe('The subagent found it: src/add.ts.')
  })
})
