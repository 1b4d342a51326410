import { readFile } from 'node:fs/promises'
import { gunzipSync } from 'node:zlib'

/**
 * The regular files of a gzipped tar (an npm package tarball): path → content. Reads ustar
 * and pax long names, so the consumer test needs no `tar` binary.
 * @throws Error naming the file when a header is malformed.
 */
export async function readTarball(file: string): Promise<Map<string, Buffer>> {
  const archive = gunzipSync(await readFile(file))
  const files = new Map<string, Buffer>()
  let offset = 0
  let longName: string | undefined
  while (offset + 512 <= archive.length) {
    const header = archive.subarray(offset, offset + 512)
    if (header.every((byte) => byte === 0)) break
    const field = (start: number, length: number) =>
      header
        .subarray(start, start + length)
        .toString('utf8')
        .replace(/\0.*$/s, '')
    const size = Number.parseInt(field(124, 12).trim() || '0', 8)
    if (!Number.isFinite(size)) throw new Error(`${file}: bad tar header at byte ${offset}`)
    const type = field(156, 1) || '0'
    const prefix = field(345, 155)
    const body = archive.subarray(offset + 512, offset + 512 + size)
    if (type === 'x') {
      // A pax header: "<length> path=<name>\n" records override the next entry's name.
      const path = /\d+ path=([^\n]*)\n/.exec(body.toString('utf8'))
      longName = path?.[1]
    } else {
      const name = longName ?? (prefix ? `${prefix}/${field(0, 100)}` : field(0, 100))
      longName = undefined
      if (type === '0') files.set(name, Buffer.from(body))
    }
    offset += 512 + Math.ceil(size / 512) * 512
  }
  return files
}
