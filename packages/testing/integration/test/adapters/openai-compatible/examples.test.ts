import { recordCordisPrints, RecordingServer } from '@warmfold/test-utils'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { main as agent } from '../../../../../llm/llm-openai-compatible/examples/agent.ts'
import { deepseekStream, deepseekUsage } from '../../../../../llm/llm-openai-compatible/test/provider-streams.ts'

// The adapter's README example that mounts an agent loop over it (examples/agent.ts, shown in its
// README verbatim), run against a recording server on 127.0.0.1 instead of DeepSeek.
const servers: RecordingServer[] = []
afterEach(async () => {
  vi.unstubAllEnvs()
  for (const server of servers.splice(0)) await server.close()
})

async function serve(responder: Parameters<typeof RecordingServer.start>[0]): Promise<RecordingServer> {
  const server = await RecordingServer.start(responder)
  servers.push(server)
  return server
}

describe('README examples run', () => {
  it('agent: an agent whose route names the adapter talks to the endpoint', async () => {
    vi.stubEnv('DEEPSEEK_API_KEY', 'sk-example')
    const server = await serve(() => ({
      sse: deepseekStream('deepseek-v4-flash', { reasoning: 'Greet.', text: 'Hi!' }, deepseekUsage(0, 20, 5, 2)),
    }))
    const { result, printed } = await recordCordisPrints(() => agent(server.baseURL))
    expect(printed).toEqual([])
    expect(result).toEqual({ reply: 'Hi!', lastError: undefined })
    expect(server.requests[0]!.json).toMatchObject({ reasoning_effort: 'max', thinking: { type: 'enabled' } })
  })
})
