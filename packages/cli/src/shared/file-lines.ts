import { createReadStream } from 'node:fs'
import { createInterface } from 'node:readline'

/** The lines of `file`, numbered from 1, blank ones left out, read as a stream (never whole in one string). */
export async function* linesOf(file: string): AsyncGenerator<readonly [number, string]> {
  const lines = createInterface({ input: createReadStream(file, { encoding: 'utf8' }), crlfDelay: Infinity })
  let index = 0
  for await (const line of lines) {
    index++
    if (line.trim() !== '') yield [index, line]
  }
}
