import type { Context } from '@cordisjs/core'
import { createUserMessage, LlmRuntime, textOf } from '@warmfold/llm'
import type { Responder } from '@warmfold/test-utils'
import { createTestContext, recordCordisPrints, RecordingServer } from '@warmfold/test-utils'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { mountDeepSeek } from '../examples/setup-deepseek.ts'
import { mountLlamaCpp } from '../examples/setup-llamacpp.ts'
import { mountOpenAI } from '../examples/setup-openai.ts'
import { mountVllm } from '../examples/setup-vllm.ts'
import { main as usage } from '../examples/usage.ts'
import {
  deepseekStream,
  deepseekUsage,
  llamacppStream,
  openaiStream,
  openaiUsage,
  vllmStream,
} from './provider-streams.ts'

// The README shows these files verbatim (checked by test-utils' readme-examples test); each
// runs against a recording server on 127.0.0.1 instead of the provider. examples/agent.ts (an
// agent loop over the adapter) runs in packages/testing/integration/test/adapters/openai-compatible.
const servers: RecordingServer[] = []
afterEach(async () => {
  vi.unstubAllEnvs()
  for (const server of servers.splice(0)) await server.close()
})

async function serve(responder: Responder): Promise<RecordingServer> {
  const server = await RecordingServer.start(responder)
  servers.push(server)
  return server
}

describe('README examples run', () => {
  it('usage: mounts the adapter with the key from DEEPSEEK_API_KEY and generates', async () => {
    vi.stubEnv('DEEPSEEK_API_KEY', 'sk-example')
    const server = await serve(() => ({
      sse: deepseekStream('deepseek-v4-flash', { text: 'Hello!' }, deepseekUsage(0, 12, 3, 0)),
    }))
    const { result, printed } = await recordCordisPrints(() => usage(server.baseURL))
    expect(printed).toEqual([])
    expect(result).toMatchObject({ text: 'Hello!', usage: { inputTokens: 12, cacheReadTokens: 0, outputTokens: 3 } })
    expect(server.requests[0]!.headers.authorization).toBe('Bearer sk-example')
    expect(server.requests[0]!.json).toMatchObject({
      model: 'deepseek-v4-flash',
      thinking: { type: 'enabled' },
      reasoning_effort: 'high',
      max_tokens: 8192,
    })
  })

  const setups: Array<{
    name: string
    mount: (ctx: Context, baseURL: string) => void
    provider: string
    model: string
    env?: string
    reply: Responder
    wire: object
    absent: string[]
  }> = [
    {
      name: 'DeepSeek',
      mount: mountDeepSeek,
      provider: 'deepseek',
      model: 'deepseek-v4-flash',
      env: 'DEEPSEEK_API_KEY',
      reply: () => ({ sse: deepseekStream('deepseek-v4-flash', { text: 'ok' }, deepseekUsage(0, 5, 1, 0)) }),
      wire: { thinking: { type: 'enabled' }, reasoning_effort: 'high', max_tokens: 8192 },
      absent: ['max_completion_tokens'],
    },
    {
      name: 'OpenAI',
      mount: mountOpenAI,
      provider: 'openai',
      model: 'gpt-5.2',
      env: 'OPENAI_API_KEY',
      reply: () => ({ sse: openaiStream('gpt-5.2', { text: 'ok' }, openaiUsage(5, 0, 1, 0)) }),
      wire: { reasoning_effort: 'medium', max_completion_tokens: 16384 },
      absent: ['thinking', 'max_tokens'],
    },
    {
      name: 'vLLM',
      mount: mountVllm,
      provider: 'vllm',
      model: 'Qwen/Qwen3-8B',
      reply: () => ({ sse: vllmStream('Qwen/Qwen3-8B', { text: 'ok' }, 5, 1) }),
      wire: { max_tokens: 4096 },
      absent: ['reasoning_effort', 'thinking'],
    },
    {
      name: 'llama.cpp',
      mount: mountLlamaCpp,
      provider: 'llamacpp',
      model: 'local',
      reply: () => ({ sse: llamacppStream('local', { text: 'ok' }, 0, 5, 1) }),
      wire: { max_tokens: 2048 },
      absent: ['reasoning_effort', 'thinking'],
    },
  ]

  it.each(setups)(
    "setup for $name: loads, registers its provider and sends the dialect's fields",
    async ({ mount, provider, model, env, reply, wire, absent }) => {
      if (env) vi.stubEnv(env, 'sk-example')
      const server = await serve(reply)
      const test = await createTestContext()
      try {
        test.ctx.plugin(LlmRuntime)
        mount(test.ctx, server.baseURL)
        expect(test.ctx.llm.providers()).toEqual([provider])
        const result = await test.ctx.llm.generate({ provider, model, messages: [createUserMessage('hello')] })
        expect(textOf(result.content)).toBe('ok')
        const body = server.requests[0]!.json as Record<string, unknown>
        expect(body).toMatchObject({ model, ...wire })
        for (const key of absent) expect(body).not.toHaveProperty(key)
        expect(server.requests[0]!.headers.authorization).toBe(env ? 'Bearer sk-example' : undefined)
        test.assertClean()
      } finally {
        await test.dispose()
      }
    },
  )
})
