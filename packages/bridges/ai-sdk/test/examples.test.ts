import { jsonSchema, tool } from 'ai'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { main as sessionStore } from '../examples/session-store.ts'
import { main as usage } from '../examples/usage.ts'
import { ScriptedProvider } from './scripted-provider.ts'

// The README shows this file verbatim (checked by test-utils' readme-examples test); it runs
// against a scripted server on 127.0.0.1 instead of the API.
describe('README examples run', () => {
  let provider: ScriptedProvider | undefined
  afterEach(async () => {
    vi.unstubAllEnvs()
    await provider?.close()
  })

  it('usage: an @ai-sdk/anthropic model wrapped with warmfoldMiddleware runs a tool loop to its answer', async () => {
    vi.stubEnv('ANTHROPIC_API_KEY', 'sk-ant-example')
    provider = await ScriptedProvider.start('anthropic', 2)
    const readFile = tool({
      description: 'Read a file',
      inputSchema: jsonSchema<{ path: string }>({ type: 'object', properties: { path: { type: 'string' } } }),
      execute: async ({ path }) => `// ${path}`,
    })
    const { text, folds } = await usage({ read_file: readFile }, provider.server.baseURL)
    expect(text).toBe('done')
    expect(folds).toEqual([])
    expect(provider.requests[0]!.recorded.json).toMatchObject({
      model: 'claude-sonnet-4-6',
      system: [{ type: 'text', text: 'You are a coding agent.' }],
    })
  })

  it('session-store: a cordis context with the JSONL session store keeps the fold log of session agent-1', async () => {
    vi.stubEnv('API_KEY', 'sk-example')
    provider = await ScriptedProvider.start('openai-compatible', 0)
    const directory = await mkdtemp(join(tmpdir(), 'warmfold-ai-sdk-example-'))
    try {
      expect(await sessionStore(directory, provider.server.baseURL)).toBe('done')
      expect(await readdir(directory)).toContain('agent-1.jsonl')
    } finally {
      await rm(directory, { recursive: true, force: true })
    }
  })
})
