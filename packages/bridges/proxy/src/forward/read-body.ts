import type { IncomingMessage } from 'node:http'
import { errorBody } from './forward-request.ts'

/** The body of a request, or why there is none to forward. */
export type BodyReading =
  | { readonly outcome: 'read'; readonly body: Buffer; readonly receivedAt: number }
  /** Over `maxBytes`: `received` bytes came before the proxy stopped reading (or `content-length` said so). */
  | { readonly outcome: 'too-large'; readonly received: number; readonly declared: boolean }
  /** The client went away before its body ended. */
  | { readonly outcome: 'aborted'; readonly reason: string }

/**
 * Reads `request`'s body into one Buffer, at most `maxBytes` of it. A `content-length` over the
 * limit is refused before a byte is kept; a body that grows past it stops being kept. The rest is
 * drained, not stored, up to `max(4 × maxBytes, 64 MiB)`, after which the connection is dropped.
 * A client that aborts mid-body resolves `aborted`; this never rejects.
 */
export function readBody(request: IncomingMessage, maxBytes: number): Promise<BodyReading> {
  return new Promise((resolve) => {
    // The rest of a refused body is read and dropped so the client can read the 413, up to a bound.
    const drainLimit = Math.max(maxBytes * 4, 64 * 1024 * 1024)
    let size = 0
    const chunks: Buffer[] = []
    let settled = false
    const settle = (reading: BodyReading): void => {
      if (settled) return
      settled = true
      resolve(reading)
    }
    const declared = Number(request.headers['content-length'])
    if (Number.isFinite(declared) && declared > maxBytes)
      settle({ outcome: 'too-large', received: declared, declared: true })
    request.on('data', (chunk: Buffer) => {
      size += chunk.length
      if (settled) {
        if (size > drainLimit) request.destroy()
        return
      }
      if (size > maxBytes) {
        chunks.length = 0
        settle({ outcome: 'too-large', received: size, declared: false })
        return
      }
      chunks.push(chunk)
    })
    request.on('end', () => settle({ outcome: 'read', body: Buffer.concat(chunks, size), receivedAt: Date.now() }))
    request.on('error', (error) => settle({ outcome: 'aborted', reason: error.message }))
    request.on('close', () => settle({ outcome: 'aborted', reason: 'the client closed the connection mid-body' }))
  })
}

/** The 413 answer's JSON body: names the limit, the size received, and the config key to raise. */
export function tooLargeBody(maxBytes: number, received: number, declared: boolean): string {
  const size = declared
    ? `its content-length is ${received} bytes`
    : `${received} bytes had arrived when it stopped reading`
  return errorBody(
    'request_too_large',
    `warmfold proxy: the request body is over the limit of ${maxBytes} bytes (config maxBodyBytes): ${size}`,
    { limit: maxBytes, received },
  )
}
