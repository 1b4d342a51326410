import type { FileHandle } from 'node:fs/promises'
import { open } from 'node:fs/promises'

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
  /** Lines written so far. */
  written = 0

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
        this.written += batch.length
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
