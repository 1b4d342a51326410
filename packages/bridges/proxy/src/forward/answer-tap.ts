import type { Transform } from 'node:stream'
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib'
import type { AnswerReader, AnswerReading } from './answer-reader.ts'

/**
 * Feeds an {@link AnswerReader} a copy of the answer's bytes as they pass, decompressing the copy
 * when the upstream sent `content-encoding` gzip, deflate or br (the client still gets the
 * compressed bytes unchanged). An encoding it cannot read makes the answer `unreadable`, nothing else.
 */
export class AnswerTap {
  private readonly decompressor: Transform | undefined
  /** Why the answer cannot be read: an encoding not read, or a decompression that failed. */
  private problem: string | undefined
  private readonly drained: Promise<void>

  constructor(
    readonly reader: AnswerReader,
    contentEncoding: string | undefined,
  ) {
    const encoding = (contentEncoding ?? '').trim().toLowerCase()
    if (encoding === 'gzip' || encoding === 'x-gzip') this.decompressor = createGunzip()
    else if (encoding === 'deflate') this.decompressor = createInflate()
    else if (encoding === 'br') this.decompressor = createBrotliDecompress()
    else if (encoding !== '' && encoding !== 'identity')
      this.problem = `the answer's content-encoding ${JSON.stringify(contentEncoding)} is not read`
    const decompressor = this.decompressor
    this.drained = decompressor
      ? new Promise((resolve) => {
          decompressor.on('data', (chunk: Buffer) => reader.push(chunk))
          decompressor.on('end', resolve)
          decompressor.on('error', (error) => {
            this.problem = `the answer's ${encoding} stream could not be decompressed: ${error.message}`
            resolve()
          })
        })
      : Promise.resolve()
  }

  /** A chunk as it was passed on to the client. */
  write(chunk: Buffer): void {
    if (this.problem !== undefined) return
    if (this.decompressor) this.decompressor.write(chunk)
    else this.reader.push(chunk)
  }

  /** The answer ended (or was `cut`); resolves with what the reader made of it. */
  async end(cut?: string): Promise<AnswerReading> {
    if (this.decompressor && this.problem === undefined) {
      if (cut === undefined) this.decompressor.end()
      else this.decompressor.destroy()
      if (cut === undefined) await this.drained
    }
    return this.reader.end(cut === undefined ? this.problem : `the answer was cut: ${cut}`)
  }
}
