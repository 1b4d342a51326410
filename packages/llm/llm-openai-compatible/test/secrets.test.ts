import { inspect } from 'node:util'
import type { LlmError, LlmErrorCode } from '@warmfold/llm'
import { canonicalJson } from '@warmfold/llm'
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { AdapterHarness } from './fixture.ts'
import { collect, expectLlmError, KEY_ENV, MODEL, mountAdapter, request, SECRET_KEY } from './fixture.ts'
import { chunk } from './provider-streams.ts'
import type { RecordedRequest, Reply } from '@warmfold/test-utils'

const harnesses: AdapterHarness[] = []
afterEach(async () => {
  vi.unstubAllEnvs()
  for (const harness of harnesses.splice(0)) await harness.dispose()
})

/** Every form in which an error could be printed or logged, its whole cause chain included. */
function renderings(error: LlmError): string[] {
  const texts = [
    error.message,
    String(error),
    error.stack ?? '',
    inspect(error, { depth: 10, showHidden: true }),
    JSON.stringify(error),
  ]
  for (let cause: unknown = error.cause; cause !== undefined; cause = (cause as { cause?: unknown }).cause) {
    texts.push(
      inspect(cause, { depth: 10, showHidden: true }),
      cause instanceof Error ? String(cause.stack) : String(cause),
    )
    if (!(cause instanceof Error)) break
  }
  return texts
}

function expectNoKey(text: string, where: string): void {
  expect(text, where).not.toContain(SECRET_KEY)
  // No fragment either (a cut message could keep part of the key).
  expect(text, where).not.toContain('SECRET')
}

/** The key as a file, a CRLF env file or a k8s secret leaves it; fetch trims the header, the adapter must too. */
const KEY_FORMS: Array<[string, () => { apiKeyEnv: string } | { apiKey: string }]> = [
  ['a clean key from apiKeyEnv', () => (vi.stubEnv(KEY_ENV, SECRET_KEY), { apiKeyEnv: KEY_ENV })],
  [
    'a key with a trailing CRLF and spaces from apiKeyEnv',
    () => (vi.stubEnv(KEY_ENV, `${SECRET_KEY}\r\n  `), { apiKeyEnv: KEY_ENV }),
  ],
  ['a key with a trailing newline in apiKey', () => ({ apiKey: `  ${SECRET_KEY}\n` })],
]

/** The key-echoing replies a careless or hostile server could send. */
const ECHOES: Array<[string, LlmErrorCode, (request: RecordedRequest) => Reply]> = [
  [
    '401 echoing the Authorization header',
    'AUTH',
    (request) => ({
      status: 401,
      body: {
        error: {
          message: `Incorrect API key provided: ${request.headers.authorization}. Find your key at https://example.com.`,
          type: 'invalid_request_error',
          code: 'invalid_api_key',
        },
      },
    }),
  ],
  [
    '403 echoing the headers as plain text',
    'AUTH',
    (request) => ({ status: 403, body: `forbidden for ${JSON.stringify(request.headers)}` }),
  ],
  [
    '500 echoing the key',
    'SERVER',
    () => ({ status: 500, body: { message: `internal error while checking ${SECRET_KEY}` } }),
  ],
  [
    '429 with the key right at the message cut',
    'RATE_LIMITED',
    () => ({ status: 429, body: { error: { message: `${'x'.repeat(590)}${SECRET_KEY}${'y'.repeat(100)}` } } }),
  ],
  [
    '400 context error echoing the key',
    'CONTEXT_WINDOW_EXCEEDED',
    () => ({
      status: 400,
      body: { error: { message: `This model's maximum context length is 10 tokens (key ${SECRET_KEY})` } },
    }),
  ],
  [
    'an error event in the stream',
    'SERVER',
    () => ({ sse: [chunk(MODEL, { content: 'x' }), { error: { message: `stream failed for ${SECRET_KEY}` } }] }),
  ],
  [
    'a chunk that is not JSON',
    'INVALID_RESPONSE',
    () => ({ sse: [chunk(MODEL, { content: 'x' }), `{"oops": "${SECRET_KEY}`] }),
  ],
]

describe('the API key never leaves the Authorization header', () => {
  for (const [keyName, keyConfig] of KEY_FORMS) {
    for (const [name, code, reply] of ECHOES) {
      it(`${keyName}, ${name}: the error, the warnings and the logs hold no key`, async () => {
        const harness = await mountAdapter(reply, { ...keyConfig(), maxRetries: 0 })
        harnesses.push(harness)
        const error = await expectLlmError(() => collect(harness, request(harness)), code)
        for (const text of renderings(error)) expectNoKey(text, `${code} error`)
        for (const warning of harness.warnings) expectNoKey(warning, 'warning')
        // The SDK logs an unparseable chunk verbatim: the log path is exercised, and redacted.
        if (code === 'INVALID_RESPONSE') expect(harness.warnings.join('\n')).toContain('[redacted]')
        for (const logged of harness.errors) expectNoKey(inspect(logged, { depth: 10 }), 'internal error')
        expect(harness.server.requests[0]!.headers.authorization).toBe(`Bearer ${SECRET_KEY}`)
      })
    }
  }

  it('redacts rather than drops: the server message is still there, with the key replaced', async () => {
    vi.stubEnv(KEY_ENV, SECRET_KEY)
    const harness = await mountAdapter(ECHOES[0]![2], { apiKeyEnv: KEY_ENV })
    harnesses.push(harness)
    const error = await expectLlmError(() => collect(harness, request(harness)), 'AUTH')
    expect(error.message).toContain('Incorrect API key provided: Bearer [redacted].')
    expect(error.status).toBe(401)
  })

  it('a usage object that echoes the (trimmed) key is redacted in raw, keys included (nothing else is removed)', async () => {
    vi.stubEnv(KEY_ENV, `${SECRET_KEY}\r\n`)
    const usage = { prompt_tokens: 5, completion_tokens: 1, note: `billed to ${SECRET_KEY}`, [SECRET_KEY]: 1 }
    const harness = await mountAdapter(() => ({ sse: [chunk(MODEL, { content: 'x' }, 'stop', { usage })] }), {
      apiKeyEnv: KEY_ENV,
    })
    harnesses.push(harness)
    const result = await harness.ctx.llm.generate(request(harness))
    expectNoKey(canonicalJson(result.usage), 'usage')
    expect(result.usage?.raw).toEqual({
      prompt_tokens: 5,
      completion_tokens: 1,
      note: 'billed to [redacted]',
      '[redacted]': 1,
    })
    harness.assertClean()
  })
})
