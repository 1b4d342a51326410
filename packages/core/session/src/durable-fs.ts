import { closeSync, fsyncSync, openSync, writeSync } from 'node:fs'
import { mkdir, stat } from 'node:fs/promises'
import { dirname } from 'node:path'
import { SessionError } from './session-error.ts'

/**
 * Creates `directory` (and missing parents) with mode 0700 when it does not exist, and fsyncs
 * the parent of every folder it created so the new entries survive a crash. An existing
 * folder is left as it is.
 * @throws SessionError `IO` naming the folder when it cannot be created or is not a folder.
 */
export async function ensureDirectory(directory: string): Promise<void> {
  let created: string | undefined
  try {
    created = await mkdir(directory, { recursive: true, mode: 0o700 })
  } catch (error) {
    throw new SessionError('IO', `the session folder ${directory} could not be created: ${(error as Error).message}`, {
      cause: error,
    })
  }
  if (created === undefined) {
    const found = await stat(directory)
    if (!found.isDirectory()) throw new SessionError('IO', `the session folder ${directory} is not a folder`)
    return
  }
  // mkdir returns the first folder it created; each created folder's entry lives in its parent.
  for (let folder = directory; ; folder = dirname(folder)) {
    fsyncDirectory(dirname(folder))
    if (folder === created || dirname(folder) === folder) break
  }
}

/** Makes the entries of `directory` (files created, renamed or removed in it) durable. */
export function fsyncDirectory(directory: string): void {
  const fd = openSync(directory, 'r')
  try {
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}

/**
 * Writes all of `bytes` at the end of append-mode descriptor `fd`. `writeSync` may write fewer
 * bytes than asked (a file size limit, a full disk): the rest is written by further calls, and
 * a call that writes nothing or fails throws, so a caller never takes a partial write as done.
 */
export function writeAll(fd: number, bytes: Buffer): void {
  let written = 0
  while (written < bytes.length) {
    const count = writeSync(fd, bytes, written, bytes.length - written)
    if (count <= 0) throw new Error(`write stopped after ${written} of ${bytes.length} bytes`)
    written += count
  }
}

/** What is at `path` when it is not a regular file, in words; `undefined` for a file or nothing. */
export function describeNonFile(found: { isFile(): boolean; isDirectory(): boolean } | undefined): string | undefined {
  if (found === undefined || found.isFile()) return undefined
  return found.isDirectory() ? 'a directory' : 'not a regular file'
}
