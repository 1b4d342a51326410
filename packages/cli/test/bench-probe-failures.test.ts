import { execFile } from 'node:child_process'
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { resolve } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'

// The consumer's view: the real `warmfold` entry point in its own process, pointed with
// --cache-probe at real servers on 127.0.0.1 that answer the way broken endpoints do.

const root = resolve(import.meta.dirname, '../../..')
const main = resolve(import.meta.dirname, '../src/main.ts')

const servers: Server[] = []
afterAll(async () => {
  for (const server of servers) {
    server.closeAllConnections()
    await new Promise((done) => server.close(done))
  }
})

async function serve(handler: (request: IncomingMessage, response: ServerResponse) => void): Promise<string> {
  const server = createServer((request, response) => {
    request.resume()
    request.on('end', () => handler(request, response))
  })
  servers.push(server)
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

/** A port nothing listens on: bound once, then released. */
async function closedPort(): Promise<string> {
  const server = createServer()
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done))
  const { port } = server.address() as AddressInfo
  await new Promise((done) => server.close(done))
  return `http://127.0.0.1:${port}`
}

/** Runs `warmfold bench` as a process; resolves with its exit code and output. */
function warmfold(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', main, 'bench', ...args],
      { cwd: root, timeout: 60_000 },
      (error, stdout, stderr) => {
        done({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr })
      },
    )
  })
}

const SMALL_RUN = ['--windows', '4800', '--steps', '2', '--strategies', 'warmfold']

const endpoints: Array<[string, () => Promise<string>, string[], RegExp]> = [
  ['a closed port', closedPort, [], /failed: cannot reach http:\/\/127\.0\.0\.1:\d+: .*ECONNREFUSED/],
  [
    'a garbage 200',
    () =>
      serve((_request, response) => {
        response.writeHead(200, { 'content-type': 'text/plain' })
        response.end('Welcome to nginx!\nThis is not an API.')
      }),
    [],
    /the endpoint answered HTTP 200 \(text\/plain\), body: Welcome to nginx! This is not an API\./,
  ],
  [
    'an HTML 404',
    () =>
      serve((_request, response) => {
        response.writeHead(404, { 'content-type': 'text/html' })
        response.end('<html><head><title>404 Not Found</title></head>\n<body>Not Found</body></html>')
      }),
    [],
    /request rejected \(HTTP 404\): <html><head><title>404 Not Found<\/title><\/head> <body>Not Found/,
  ],
  [
    'a 401',
    () =>
      serve((_request, response) => {
        response.writeHead(401, { 'content-type': 'application/json' })
        response.end(
          JSON.stringify({
            error: { message: 'Authentication Fails, Your api key is invalid', type: 'authentication_error' },
          }),
        )
      }),
    [],
    /authentication failed \(HTTP 401\): Authentication Fails, Your api key is invalid/,
  ],
  [
    "llama-server's tool-call parser error",
    () =>
      serve((_request, response) => {
        response.writeHead(200, { 'content-type': 'text/event-stream' })
        response.end(
          `data: ${JSON.stringify({ error: { code: 500, message: 'Failed to parse input at pos 9: <tool_call>', type: 'server_error' } })}\n\n`,
        )
      }),
    [],
    /the server reported an error inside the response stream: Failed to parse input at pos 9: <tool_call>/,
  ],
  [
    'a silent server with --probe-timeout 1',
    () => serve(() => {}),
    ['--probe-timeout', '1'],
    /no response from http:\/\/127\.0\.0\.1:\d+ within 1000 ms; each request may take --probe-timeout 1 s/,
  ],
]

describe('warmfold bench --cache-probe against a failing endpoint', () => {
  it.concurrent.each(endpoints)(
    '%s: exit 1, the endpoint named with its answer, no stack',
    async (_name, start, extra, named) => {
      const url = await start()
      const result = await warmfold(['--cache-probe', url, ...extra, ...SMALL_RUN])
      expect(result.code).toBe(1)
      expect(result.stderr).toContain(
        `warmfold: window 4800, strategy warmfold: cache probe: request 0 (conversation) to ${url}/chat/completions failed: `,
      )
      expect(result.stderr).toMatch(named)
      expect(result.stderr).not.toContain('out of step')
      expect(`${result.stdout}${result.stderr}`).not.toMatch(/^ {4}at /m)
      expect(result.stdout).toBe('')
    },
    60_000,
  )
})
