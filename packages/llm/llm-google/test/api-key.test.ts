import { inspect } from 'node:util'
import { LlmError } from '@warmfold/llm'
import { REDACTED } from '@warmfold/llm/adapter'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { GoogleAdapter, GoogleLlmAdapter, parseGoogleConfig } from '../src/index.ts'
import { resolveApiKey } from '../src/config.ts'
import { disposeAll, MODELS, mountAdapter, TEST_KEY } from './fixture.ts'
import { geminiError, geminiReply } from './gemini-stream.ts'

afterEach(async () => {
  vi.unstubAllEnvs()
  await disposeAll()
})

const everything = (value: unknown) => inspect(value, { depth: 20, showHidden: true })

describe('the API key', () => {
  it('is redacted from errors whose body echoes it, and from usage.raw', async () => {
    const adapter = await mountAdapter((recorded, index) => {
      const key = String(recorded.headers['x-goog-api-key'])
      return index === 0
        ? geminiError(400, 'INVALID_ARGUMENT', `API key not valid: ${key}`, {
            details: [
              { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID', metadata: { key } },
            ],
          })
        : geminiReply({ parts: [{ text: 'ok' }], usage: { promptTokenCount: 3, candidatesTokenCount: 1, echo: key } })
    })
    const error = await adapter.failure('AUTH')
    expect(everything(error)).not.toContain(TEST_KEY)
    expect(error.message).toContain(REDACTED)
    const chunks = await adapter.collect()
    expect(everything(chunks)).not.toContain(TEST_KEY)
    expect(chunks.find((chunk) => chunk.type === 'usage')).toMatchObject({ usage: { raw: { echo: REDACTED } } })
  })

  it('is read from GEMINI_API_KEY by default, trimmed, and sent only as x-goog-api-key', async () => {
    vi.stubEnv('GEMINI_API_KEY', `${TEST_KEY}\r\n`)
    vi.stubEnv('GOOGLE_GENAI_USE_VERTEXAI', 'true')
    const adapter = await mountAdapter(() => geminiReply({ parts: [{ text: 'ok' }] }), { apiKey: undefined })
    await adapter.collect()
    const [recorded] = adapter.server.requests
    expect(recorded!.headers['x-goog-api-key']).toBe(TEST_KEY)
    // The environment cannot switch the client to Vertex AI: the Gemini API path is used.
    expect(recorded!.url).toMatch(/^\/v1beta\/models\//)
    expect(recorded!.body).not.toContain(TEST_KEY)
    adapter.assertClean()
  })

  it('names the variable, never a value, when it is missing, and keeps the key out of config errors', () => {
    expect(() => resolveApiKey(parseGoogleConfig({ apiKeyEnv: 'NO_SUCH_GEMINI_KEY_VAR' }), {})).toThrow(
      /NO_SUCH_GEMINI_KEY_VAR \(apiKeyEnv\) is not set/,
    )
    let caught: unknown
    try {
      parseGoogleConfig({ apiKey: TEST_KEY, apiKeyEnv: 'X' })
    } catch (error) {
      caught = error
    }
    expect(String(caught)).toMatch(/apiKey and apiKeyEnv are exclusive/)
    expect(String(caught)).not.toContain(TEST_KEY)
    expect(() => new GoogleLlmAdapter(parseGoogleConfig({ models: MODELS }), 'two words')).toThrow(TypeError)
    expect(GoogleAdapter.Config).toBe(parseGoogleConfig)
  })

  it('is redacted from a NETWORK error and its cause', async () => {
    const adapter = await mountAdapter(() => geminiReply({ parts: [{ text: 'x' }] }), { maxRetries: 0 })
    await adapter.server.close()
    const error = await adapter.failure('NETWORK')
    expect(LlmError.isInstance(error)).toBe(true)
    expect(everything(error)).not.toContain(TEST_KEY)
  })
})
