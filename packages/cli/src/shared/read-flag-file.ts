import type { Stats } from 'node:fs'
import { closeSync, constants, fstatSync, openSync, readSync, statSync } from 'node:fs'
import { UsageError } from './usage-error.ts'

/**
 * The largest file a flag may name (`--price`, `--latency`): a profile is a few hundred bytes of
 * JSON, so anything near a mebibyte is the wrong file, and reading no further keeps `/dev/zero`-sized
 * mistakes from filling memory.
 */
export const MAX_FLAG_FILE_BYTES = 1024 * 1024

/** The UTF-8 byte order mark, which Windows editors write at the start of a "UTF-8" file. */
export const UTF8_BOM = '\uFEFF'

/** What kind of file `stats` is, for a message that refuses it. */
export function describeFileKind(stats: Stats): string {
  if (stats.isDirectory()) return 'a folder'
  if (stats.isFIFO()) return 'a FIFO (named pipe)'
  if (stats.isCharacterDevice()) return 'a character device'
  if (stats.isBlockDevice()) return 'a block device'
  if (stats.isSocket()) return 'a socket'
  return 'not a regular file'
}

/**
 * `text` without a leading UTF-8 byte order mark. UTF-16 text (a BOM of FF FE or FE FF, read as
 * UTF-8) is refused: its characters would be unreadable, and the message could only quote garbage.
 * @throws UsageError starting with `where`.
 */
export function withoutBom(text: string, where: string): string {
  if (text.startsWith(UTF8_BOM)) return text.slice(1)
  if (text.startsWith('\uFFFD\uFFFD'))
    throw new UsageError(`${where} is not UTF-8 text (it starts with a UTF-16 byte order mark?); save it as UTF-8`)
  return text
}

/**
 * Reads the file a flag names, as UTF-8 without a byte order mark. Only a regular file is read
 * (a FIFO would block the command forever, `/dev/zero` would never end), and at most
 * {@link MAX_FLAG_FILE_BYTES} of it. The file is opened without blocking and checked again once
 * open, so a path swapped for a FIFO between the check and the read is refused too.
 * @param where how messages name the file, e.g. `--latency "x.json"`.
 * @param use what a message that refuses a file that is not a regular one suggests instead.
 * @throws UsageError starting with `where`: not a regular file, larger than {@link MAX_FLAG_FILE_BYTES}, UTF-16;
 *   the `NodeJS.ErrnoException` of `stat` or `open` otherwise (ENOENT, EACCES), for the caller to word.
 */
export function readFlagFile(path: string, where: string, use: string): string {
  const refuseIrregular = (stats: Stats) => {
    if (!stats.isFile()) throw new UsageError(`${where} is ${describeFileKind(stats)}, not a regular file; ${use}`)
  }
  refuseIrregular(statSync(path))
  const descriptor = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK)
  try {
    const opened = fstatSync(descriptor)
    refuseIrregular(opened)
    if (opened.size > MAX_FLAG_FILE_BYTES) throw tooLarge(where, `it has ${opened.size}`)
    // One byte more than allowed, so a file that grew since the check is caught without reading it all.
    const buffer = Buffer.alloc(MAX_FLAG_FILE_BYTES + 1)
    let length = 0
    while (length < buffer.length) {
      const read = readSync(descriptor, buffer, length, buffer.length - length, null)
      if (read === 0) break
      length += read
    }
    if (length > MAX_FLAG_FILE_BYTES) throw tooLarge(where, 'it grew past that while being read')
    return withoutBom(buffer.toString('utf8', 0, length), where)
  } finally {
    closeSync(descriptor)
  }
}

function tooLarge(where: string, why: string): UsageError {
  return new UsageError(`${where} is larger than ${MAX_FLAG_FILE_BYTES} bytes (${why}); name the JSON file itself`)
}
