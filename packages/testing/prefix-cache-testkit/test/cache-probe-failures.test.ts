import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createUserMessage } from '@warmfold/llm'
import { afterEach, describe, expect, it } from 'vitest'
import { CacheProbe, CacheProbeError, runProbedWorkload } from '../src/index.ts'

// Real HTTP servers on 127.0.0.1 answer the probe the way broken or misconfigured endpoints do;
// the probe must say what each one answered, and a workload must stop at the first failure.

type Handler = (request: IncomingMessage, response: ServerResponse, index: number) => void

const servers: Server[] = []
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  }
})

/** Starts a server; `requests` counts the requests it received. */
async function serve(handler: Handler): Promise<{ baseURL: string; requests: () => number }> {
  let count = 0
  const server = createServer((request, response) => {
    const index = count++
    request.resume()
    request.on('end', () => handler(request, response, index))
  })
  servers.push(server)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests: () => count }
}

/** A port nothing listens on: bound once, then released. */
async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return port
}

/** A valid streamed 1-token answer with llama.cpp-style usage. */
function answer(response: ServerResponse, promptTokens: number, cachedTokens: number): void {
  response.writeHead(200, { 'content-type': 'text/event-stream' })
  response.write(
    `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: 'x' }, finish_reason: null }] })}\n\n`,
  )
  response.write(
    `data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: 'length' }], usage: { prompt_tokens: promptTokens, completion_tokens: 1, prompt_tokens_details: { cached_tokens: cachedTokens } } })}\n\n`,
  )
  response.end('data: [DONE]\n\n')
}

/** What llama-server answers when the model's text fails its tool-call parser (before and inside the stream). */
const PARSER_ERROR = {
  error: {
    code: 500,
    message: 'Failed to parse input at pos 14: <tool_call>\n<function=read_file>',
    type: 'server_error',
  },
}

const request = {
  provider: 'sim',
  model: 'coder',
  purpose: 'conversation',
  messages: [createUserMessage('Read the loader.')],
}

async function failure(probe: CacheProbe): Promise<CacheProbeError> {
  const error = await probe.probe(request).then(
    () => undefined,
    (caught: unknown) => caught,
  )
  expect(error).toBeInstanceOf(CacheProbeError)
  return error as CacheProbeError
}

describe('CacheProbe names what the endpoint answered', () => {
  it('a refused connection: the URL and the system error', async () => {
    const port = await closedPort()
    const error = await failure(new CacheProbe({ baseURL: `http://127.0.0.1:${port}`, timeoutMs: 5000 }))
    expect(error.failure).toBe('NETWORK')
    expect(error.message).toContain(`request 0 (conversation) to http://127.0.0.1:${port}/chat/completions failed`)
    expect(error.message).toContain('ECONNREFUSED')
  })

  it('a 200 that is not an event stream: the status, the content type and the start of the body', async () => {
    const server = await serve((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html' })
      response.end(`<html>\n  <body>Please sign in to the proxy</body>\n</html>${'.'.repeat(5000)}`)
    })
    const error = await failure(new CacheProbe({ baseURL: server.baseURL }))
    expect(error.failure).toBe('STREAM_INCOMPLETE')
    expect(error.message).toContain(
      'the endpoint answered HTTP 200 (text/html), body: <html> <body>Please sign in to the proxy</body> </html>',
    )
    // Only the start of the body.
    expect(error.message.length).toBeLessThan(700)
  })

  it('an HTML 404: the status, the page and a hint about the base URL', async () => {
    const server = await serve((_request, response) => {
      response.writeHead(404, { 'content-type': 'text/html' })
      response.end('<!DOCTYPE html>\n<html><title>404 Not Found</title><h1>Not Found</h1></html>')
    })
    const error = await failure(new CacheProbe({ baseURL: server.baseURL }))
    expect(error.status).toBe(404)
    expect(error.message).toContain('request rejected (HTTP 404): <!DOCTYPE html> <html><title>404 Not Found</title>')
    expect(error.message).toContain('/v1')
  })

  it('a 401: the status and the server message, never the key', async () => {
    const key = 'sk-probe-secret-0123456789'
    process.env.WARMFOLD_PROBE_TEST_KEY = key
    try {
      const server = await serve((_request, response) => {
        response.writeHead(401, { 'content-type': 'application/json' })
        response.end(
          JSON.stringify({
            error: {
              message: `Incorrect API key provided: ${key}`,
              type: 'invalid_request_error',
              code: 'invalid_api_key',
            },
          }),
        )
      })
      const error = await failure(new CacheProbe({ baseURL: server.baseURL, apiKeyEnv: 'WARMFOLD_PROBE_TEST_KEY' }))
      expect(error.failure).toBe('AUTH')
      expect(error.message).toContain('authentication failed (HTTP 401): Incorrect API key provided: [redacted]')
      expect(error.message).not.toContain(key)
    } finally {
      delete process.env.WARMFOLD_PROBE_TEST_KEY
    }
  })

  it('a body that echoes the key is quoted redacted, also when the variable carries a line break', async () => {
    const key = 'sk-echoed-secret-9876543210'
    // As read from a CRLF env file; what is sent (and echoed) is the trimmed key.
    process.env.WARMFOLD_PROBE_TEST_KEY = `${key}\r\n`
    try {
      const server = await serve((_request, response) => {
        response.writeHead(200, { 'content-type': 'text/plain' })
        response.end(`unknown key ${key}`)
      })
      const error = await failure(new CacheProbe({ baseURL: server.baseURL, apiKeyEnv: 'WARMFOLD_PROBE_TEST_KEY' }))
      expect(error.message).toContain('body: unknown key [redacted]')
      expect(error.message).not.toContain(key)
    } finally {
      delete process.env.WARMFOLD_PROBE_TEST_KEY
    }
  })

  it.each([
    [
      'as an HTTP 500',
      (response: ServerResponse) => {
        response.writeHead(500, { 'content-type': 'application/json' })
        response.end(JSON.stringify(PARSER_ERROR))
      },
    ],
    [
      'inside the stream',
      (response: ServerResponse) => {
        response.writeHead(200, { 'content-type': 'text/event-stream' })
        response.end(`data: ${JSON.stringify(PARSER_ERROR)}\n\n`)
      },
    ],
  ])("llama-server's tool-call parser error %s: the server's message", async (_how, reply) => {
    const server = await serve((_request, response) => reply(response))
    const error = await failure(new CacheProbe({ baseURL: server.baseURL }))
    expect(error.failure).toBe('SERVER')
    expect(error.message).toContain('Failed to parse input at pos 14: <tool_call> <function=read_file>')
  })

  it('a silent endpoint fails after timeoutMs', async () => {
    const server = await serve(() => {})
    const error = await failure(new CacheProbe({ baseURL: server.baseURL, timeoutMs: 300 }))
    expect(error.failure).toBe('TIMEOUT')
    expect(error.message).toContain(`no response from ${server.baseURL} within 300 ms`)
  })

  it('a stream that stalls after its headers fails after timeoutMs', async () => {
    const server = await serve((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' })
      response.write('data: {"choices":[]}\n\n')
    })
    const error = await failure(new CacheProbe({ baseURL: server.baseURL, timeoutMs: 300 }))
    expect(error.failure).toBe('TIMEOUT')
  })

  it('a base URL with a query or fragment is refused without quoting the query', () => {
    expect(() => new CacheProbe({ baseURL: 'http://127.0.0.1:1/v1?api-key=secret' })).toThrow(
      /must not carry a query or fragment.*http:\/\/127\.0\.0\.1:1\/v1\?…$/,
    )
    expect(() => new CacheProbe({ baseURL: 'http://127.0.0.1:1/v1?api-key=secret' })).not.toThrow(/secret/)
  })
})

describe('runProbedWorkload stops at the first probe failure', () => {
  it("rejects with the probe's own error when the first request fails", async () => {
    const server = await serve((_request, response) => {
      response.writeHead(401, { 'content-type': 'application/json' })
      response.end(JSON.stringify({ error: { message: 'Invalid API key', type: 'invalid_request_error' } }))
    })
    const run = runProbedWorkload({ window: 4800, steps: 4 }, new CacheProbe({ baseURL: server.baseURL }))
    await expect(run).rejects.toThrow(CacheProbeError)
    await expect(run).rejects.toThrow('authentication failed (HTTP 401): Invalid API key')
    expect(server.requests()).toBe(1)
  })

  it('rejects with the failure of a later request and sends nothing after it', async () => {
    const server = await serve((_request, response, index) => {
      if (index < 3) return answer(response, 1000 + index, 900)
      response.writeHead(400, { 'content-type': 'application/json' })
      response.end(JSON.stringify({ error: { message: 'model "probe" not found', type: 'invalid_request_error' } }))
    })
    const probe = new CacheProbe({ baseURL: server.baseURL })
    const run = runProbedWorkload({ window: 4800, steps: 8 }, probe)
    await expect(run).rejects.toThrow(
      `cache probe: request 3 (conversation) to ${server.baseURL}/chat/completions failed: request rejected (HTTP 400): model "probe" not found`,
    )
    expect(probe.records.map((record) => record.promptTokens)).toEqual([1000, 1001, 1002])
    expect(server.requests()).toBe(4)
  })
})
