import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { describe, expect, it } from 'vitest'
import { describeConnectionFailure } from '../src/connection-failure.ts'

// Real failures of Node's fetch against servers on 127.0.0.1: nothing is constructed by hand
// except the wrappers an SDK puts around them.

async function listen(
  handler: Parameters<typeof createServer>[1],
): Promise<{ url: string; close: () => Promise<void> }> {
  const server = createServer(handler)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

async function failureOf(run: () => Promise<unknown>): Promise<unknown> {
  try {
    await run()
  } catch (error) {
    return error
  }
  throw new Error('expected a failure')
}

describe('describeConnectionFailure', () => {
  it('recognises a refused connection (fetch failed, ECONNREFUSED)', async () => {
    const closed = await listen(() => {})
    await closed.close()
    const error = await failureOf(() => fetch(closed.url))
    expect(describeConnectionFailure(error)).toMatch(
      /^fetch failed: connect ECONNREFUSED 127\.0\.0\.1:\d+ \(ECONNREFUSED\)$/,
    )
  })

  it('recognises a socket the server closes mid-body (terminated, UND_ERR_SOCKET), also wrapped by an SDK', async () => {
    const server = await listen((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' })
      response.write('data: {"partial": true}\n\n', () => response.socket?.destroy())
    })
    try {
      const response = await fetch(server.url)
      const error = await failureOf(() => response.text())
      expect(describeConnectionFailure(error)).toBe('terminated: other side closed (UND_ERR_SOCKET)')
      // How the AI SDK reports it: an APICallError with the response's status, the fetch error as cause.
      const wrapped = Object.assign(new Error('Failed to process successful response', { cause: error }), {
        statusCode: 200,
      })
      expect(describeConnectionFailure(wrapped)).toBe(
        'Failed to process successful response: terminated: other side closed (UND_ERR_SOCKET)',
      )
    } finally {
      await server.close()
    }
  })

  it('is undefined for what is not a connection failure: an abort, bad JSON, an HTTP error, a plain object', async () => {
    const server = await listen((_request, response) => {
      response.writeHead(200)
      response.write('x')
    })
    try {
      const controller = new AbortController()
      const response = await fetch(server.url, { signal: controller.signal })
      const reading = failureOf(() => response.text())
      controller.abort()
      expect(describeConnectionFailure(await reading)).toBeUndefined()
    } finally {
      await server.close()
    }
    expect(describeConnectionFailure(await failureOf(async () => JSON.parse('{')))).toBeUndefined()
    expect(
      describeConnectionFailure(Object.assign(new Error('429 Too Many Requests'), { status: 429 })),
    ).toBeUndefined()
    expect(describeConnectionFailure({ code: 'ECONNRESET' })).toBeUndefined()
  })
})
