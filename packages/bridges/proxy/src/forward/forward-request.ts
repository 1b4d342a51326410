import type { Agent as HttpAgent, ClientRequest, IncomingMessage, ServerResponse } from 'node:http'
import { request as httpRequest } from 'node:http'
import type { Agent as HttpsAgent } from 'node:https'
import { request as httpsRequest } from 'node:https'
import type { AnswerReading } from './answer-reader.ts'
import type { AnswerTap } from './answer-tap.ts'
import { endToEndHeaders, forwardHeaders } from './forward-headers.ts'

/** Where requests go: the configured upstream URL and the connection pool for it. */
export interface ForwardTarget {
  readonly url: URL
  readonly agent: HttpAgent | HttpsAgent
}

/** One request in flight upstream, its answer's head arrived. */
export interface UpstreamCall {
  readonly request: ClientRequest
  readonly response: IncomingMessage
}

/**
 * Sends one request upstream with node:http(s), which writes headers exactly as given (fetch would
 * not): `rawHeaders` filtered by {@link forwardHeaders}, `body` as the exact bytes, to the
 * upstream's path followed by `path` (path and query as the client sent them). Resolves when the
 * answer's head arrives; rejects with the network error when the upstream cannot be reached.
 *
 * A pooled connection the upstream had closed while idle fails with ECONNRESET before a byte of
 * answer: that request never reached the upstream, so it is sent again once on a fresh connection
 * (what Node's docs advise for keep-alive agents); no other failure is retried.
 */
export async function sendUpstream(
  target: ForwardTarget,
  method: string,
  path: string,
  rawHeaders: readonly string[],
  body: Buffer,
): Promise<UpstreamCall> {
  const headers = forwardHeaders(rawHeaders, target.url.host, body.length)
  try {
    return await sendOnce(target, method, path, headers, body)
  } catch (error) {
    if (!(error as { staleSocket?: boolean }).staleSocket) throw error
    return sendOnce(target, method, path, headers, body)
  }
}

function sendOnce(
  target: ForwardTarget,
  method: string,
  path: string,
  headers: string[],
  body: Buffer,
): Promise<UpstreamCall> {
  const { url, agent } = target
  const request = (url.protocol === 'https:' ? httpsRequest : httpRequest)({
    protocol: url.protocol,
    hostname: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: url.port === '' ? undefined : Number(url.port),
    method,
    path: `${url.pathname.replace(/\/+$/, '')}${path}`,
    headers,
    setHost: false,
    agent,
  })
  return new Promise((resolve, reject) => {
    request.once('error', (error: NodeJS.ErrnoException) => {
      if (request.reusedSocket && error.code === 'ECONNRESET') Object.assign(error, { staleSocket: true })
      reject(error)
    })
    request.once('response', (response) => {
      request.removeAllListeners('error')
      // Errors after the head arrived surface as the answer's cut (see relayAnswer).
      request.on('error', () => undefined)
      resolve({ request, response })
    })
    request.end(body)
  })
}

/** Answers `client` with `body` whole: JSON, unless `type` says otherwise. */
export function sendWhole(client: ServerResponse, status: number, body: string, type = 'application/json'): void {
  client.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) })
  client.end(body)
}

/** The JSON body of an error the proxy answers itself: `{ error: { type, message, …details } }`. */
export function errorBody(type: string, message: string, details: Readonly<Record<string, unknown>> = {}): string {
  return JSON.stringify({ error: { type, message, ...details } })
}

/** How relaying one upstream answer ended. */
export type RelayOutcome =
  | {
      /** The answer went to the client (whole, or cut: then `reading.unreadable` says so). */
      readonly kind: 'relayed'
      readonly reading: AnswerReading
      readonly status: number
      readonly firstByteAt?: number
      readonly endedAt: number
    }
  | {
      /** Held back and dropped (only with `hold`): nothing reached the client. */
      readonly kind: 'refused'
      readonly reason: string
      readonly reading: AnswerReading
      readonly status: number
      readonly endedAt: number
    }

/**
 * How long a rewritten request's answer may be held back waiting for its first text, and how much
 * of it: past either, what was held goes to the client and the rest streams on (fail-open is given
 * up for that answer rather than let the agent time out or the proxy buffer without bound).
 */
export interface HoldLimit {
  readonly ms: number
  readonly bytes: number
  /** Called once when the limit releases a held answer, with why. */
  readonly onRelease: (reason: string) => void
}

/**
 * Passes the upstream answer of `call` to `client` chunk by chunk as it arrives (status and
 * headers as sent, hop-by-hop headers dropped), while `tap` reads a copy. The client's
 * backpressure pauses the upstream; a client that goes away aborts the upstream request; an
 * upstream that breaks off mid-answer breaks off the client's answer too.
 *
 * With `hold` (a rewritten request under fail-open) nothing is sent until the reader decides:
 * the first text flushes what was held and streams the rest; a tool call, an error status, a cut
 * or an unreadable answer drops it (the upstream request is aborted) and resolves `refused`; no
 * decision within the hold's limit releases it as it came.
 */
export function relayAnswer(
  call: UpstreamCall,
  client: ServerResponse,
  tap: AnswerTap,
  hold: HoldLimit | undefined,
): Promise<RelayOutcome> {
  const { request, response: upstream } = call
  const status = upstream.statusCode ?? 502
  return new Promise((resolve) => {
    let held: Buffer[] | undefined = hold ? [] : undefined
    let heldBytes = 0
    let holdTimer: NodeJS.Timeout | undefined
    let firstByteAt: number | undefined
    let settled = false
    let ended = false
    const refusedFor = hold && status >= 400 ? `the rewritten request was answered with status ${status}` : undefined

    const open = (): void => {
      client.writeHead(status, upstream.statusMessage, endToEndHeaders(upstream.rawHeaders))
    }
    let waitingForDrain = false
    const send = (chunk: Buffer): void => {
      firstByteAt ??= Date.now()
      if (!client.write(chunk) && !waitingForDrain) {
        waitingForDrain = true
        upstream.pause()
        client.once('drain', () => {
          waitingForDrain = false
          upstream.resume()
        })
      }
    }
    const flush = (): void => {
      clearTimeout(holdTimer)
      const chunks = held ?? []
      held = undefined
      open()
      for (const chunk of chunks) send(chunk)
    }
    // The limit passed before the reader decided: what was held goes on, and the rest streams.
    const release = (reason: string): void => {
      if (settled || held === undefined || ended) return
      hold?.onRelease(reason)
      flush()
    }
    // Resolves with the reading once it is read: relayed, or (given a reason) refused. Callers set `settled` first.
    const settle = async (reading: AnswerReading | Promise<AnswerReading>, refusal?: string): Promise<void> => {
      const read = await reading
      const endedAt = Date.now()
      if (refusal !== undefined) return resolve({ kind: 'refused', reason: refusal, reading: read, status, endedAt })
      resolve({
        kind: 'relayed',
        reading: read,
        status,
        ...(firstByteAt === undefined ? {} : { firstByteAt }),
        endedAt,
      })
    }
    const refuse = (reason: string, cut?: string): void => {
      if (settled) return
      settled = true
      clearTimeout(holdTimer)
      held = undefined
      if (!ended) request.destroy()
      void settle(tap.end(cut), reason)
    }
    const relayed = (cut?: string): void => {
      if (settled) return
      settled = true
      void settle(tap.end(cut))
    }

    if (!hold) open()
    else if (refusedFor === undefined) {
      tap.reader.onDecided = (content) => {
        // Once the upstream ended, the whole reading decides (below), not the first event read at the end.
        if (settled || held === undefined || ended) return
        if (content === 'text') flush()
        else refuse('the rewritten request was answered with a tool call')
      }
      holdTimer = setTimeout(() => release(`it showed no text within ${hold.ms} ms`), hold.ms)
      holdTimer.unref()
    }

    upstream.on('data', (chunk: Buffer) => {
      if (settled) return
      if (held) {
        if (refusedFor === undefined) held.push(chunk)
        heldBytes += chunk.length
      } else send(chunk)
      tap.write(chunk)
      if (hold && heldBytes > hold.bytes && refusedFor === undefined)
        release(`it showed no text within the first ${hold.bytes} bytes`)
    })
    upstream.on('end', () => {
      ended = true
      clearTimeout(holdTimer)
      if (settled) return
      if (held === undefined) {
        client.end()
        return relayed()
      }
      if (refusedFor !== undefined) return refuse(refusedFor)
      // Held to the end (a JSON answer, or a stream without text): decide on the whole reading.
      void tap.end().then((reading) => {
        if (settled) return
        settled = true
        if (reading.content === 'tool-call')
          return settle(reading, 'the rewritten request was answered with a tool call')
        if (reading.unreadable !== undefined)
          return settle(reading, `the rewritten request's answer could not be read: ${reading.unreadable}`)
        flush()
        client.end()
        return settle(reading)
      })
    })
    upstream.on('error', () => undefined)
    upstream.on('close', () => {
      clearTimeout(holdTimer)
      if (ended || settled) return
      const cut = 'the upstream connection closed before the answer ended'
      if (held !== undefined) return refuse(`the rewritten request's answer was cut`, cut)
      client.destroy()
      relayed(cut)
    })
    client.on('close', () => {
      clearTimeout(holdTimer)
      if (client.writableFinished || ended) return
      request.destroy()
      held = undefined
      relayed('the client went away')
    })
  })
}
