import type { FileHandle } from 'node:fs/promises'
import { open } from 'node:fs/promises'
import type { Exchange } from '../proxy-exchange.ts'
import { redactHeaders, redactUrl } from '../redact-headers.ts'
import type { ExchangeRecord } from './exchange-record.ts'

/**
 * One exchange's log line: a `warmfold doctor` request line (`t`, `url`, `headers`, `body`) plus the
 * `warmfold` record. The body (`json`, or the raw text of an unreadable one) only when the record
 * says it is logged.
 */
export function logLineOf(
  exchange: Exchange,
  record: ExchangeRecord,
  json: object | undefined,
): Record<string, unknown> {
  const { request } = exchange
  // Only what the record says is logged: an analysis that failed after parsing still has `json`.
  const unreadable = record.kind === 'unreadable'
  const withBody = record.bodyLogged && (record.kind === 'conversation' || record.kind === 'compaction' || unreadable)
  const body = withBody ? (json ?? (unreadable ? exchange.sent.toString('utf8') : undefined)) : undefined
  return {
    t: request.receivedAt,
    url: redactUrl(request.url),
    headers: redactHeaders(request.headers),
    ...(body === undefined ? {} : { body }),
    warmfold: record,
  }
}

/**
 * The observer's JSONL log: created with mode 0600 (only its owner reads what agents sent),
 * appended to, one line per exchange, written in the order lines are given (one writer, lines
 * batched while a write is in flight). {@link close} writes every line given before it.
 */
export class ObserverLog {
  private handle: Promise<FileHandle> | undefined
  private pending: string[] = []
  private writing: Promise<void> | undefined
  /** The first write error; later lines are dropped and {@link close} rejects with it. */
  private failure: Error | undefined

  /** @param onError told once, on the first failure (the observer never throws into the forward). */
  constructor(
    readonly path: string,
    private readonly onError: (error: Error) => void = () => {},
  ) {}

  /** Queues one line (a JSON text without its newline). */
  append(line: string): void {
    if (this.failure) return
    this.pending.push(`${line}\n`)
    this.writing ??= this.drain()
  }

  /** Writes what is queued, then closes the file. */
  async close(): Promise<void> {
    while (this.writing) await this.writing
    if (this.handle) await (await this.handle.catch(() => undefined))?.close()
    this.handle = undefined
    if (this.failure) throw this.failure
  }

  private async drain(): Promise<void> {
    try {
      this.handle ??= open(this.path, 'a', 0o600)
      const handle = await this.handle
      while (this.pending.length) {
        const batch = this.pending
        this.pending = []
        await handle.write(batch.join(''))
      }
    } catch (error) {
      this.failure = new Error(`the proxy log ${JSON.stringify(this.path)} cannot be written: ${String(error)}`, {
        cause: error,
      })
      this.pending = []
      this.onError(this.failure)
    } finally {
      this.writing = undefined
    }
  }
}
