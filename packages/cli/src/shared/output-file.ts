import { constants, close, fstat, open, writeFile } from 'node:fs'
import { stat } from 'node:fs/promises'
import { Socket } from 'node:net'
import { promisify } from 'node:util'
import type { OutputWriter } from './check-out-path.ts'
import { checkOutPath } from './check-out-path.ts'
import { RunError } from './run-error.ts'
import { UsageError } from './usage-error.ts'

const openFile = promisify(open)
const statFile = promisify(fstat)
const closeFile = promisify(close)
const writeWhole = promisify(writeFile)

/** An output file (`--out`, `--html`) checked before the run, written once after it. */
export interface OutputFile {
  readonly path: string
  /** Writes the whole document and closes the file. */
  write(text: string): Promise<void>
  /** Closes the file without writing, after a failed run; does nothing once written. */
  close(): Promise<void>
}

/**
 * Checks the output file with {@link checkOutPath} before anything runs. A FIFO is opened for
 * writing at once, without waiting (as a shell's `> fifo` would, but refusing instead of
 * blocking): one that no process reads is refused now rather than after the run, and the reader
 * keeps waiting for the document instead of seeing the end of its input early.
 * @throws UsageError naming the flag, the path and what is wrong with it.
 */
export async function openOutputFile(path: string, writer: OutputWriter = {}): Promise<OutputFile> {
  await checkOutPath(path, writer)
  const flag = writer.flag ?? '--out'
  if (!(await stat(path).catch(() => undefined))?.isFIFO())
    return { path, write: (text) => writeOutputFile(path, text), close: async () => undefined }
  let fd: number
  try {
    fd = await openFile(path, constants.O_WRONLY | constants.O_NONBLOCK)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENXIO')
      throw new UsageError(
        `${flag} ${JSON.stringify(path)} is a FIFO that no process is reading: writing it would wait for a ` +
          'reader forever; start the reader first, or name a regular file',
      )
    throw new UsageError(
      `${flag} ${JSON.stringify(path)} is a FIFO that cannot be opened for writing: ` +
        (code ?? (error as Error).message),
    )
  }
  let open = true
  return {
    path,
    write: (text) => {
      open = false
      return writePipe(fd, text)
    },
    close: async () => {
      if (open) await closeFile(fd)
      open = false
    },
  }
}

/**
 * Runs `use` with the output file `path` names, opened with {@link openOutputFile} first (none without a path), and
 * closes it after, written or not.
 */
export async function withOutputFile<T>(
  path: string | undefined,
  writer: OutputWriter,
  use: (output: OutputFile | undefined) => Promise<T>,
): Promise<T> {
  const output = path === undefined ? undefined : await openOutputFile(path, writer)
  try {
    return await use(output)
  } finally {
    await output?.close()
  }
}

/**
 * Writes the whole document to `output`, which `flag` names; `note` follows the path in the message.
 * @throws RunError `could not write <flag> "<path>"<note>: <code>` when it cannot be written.
 */
export async function writeDocument(output: OutputFile, flag: string, text: string, note = ''): Promise<void> {
  await output.write(text).catch((error: NodeJS.ErrnoException) => {
    throw new RunError(
      `could not write ${flag} ${JSON.stringify(output.path)}${note}: ${error.code ?? error.message}`,
      {
        cause: error,
      },
    )
  })
}

/**
 * Writes `text` to an output file: a regular file (created or truncated), a device such as
 * `/dev/null` or `/dev/stdout`, or a FIFO some process reads. Nothing here ever blocks a thread:
 * the file is opened with `O_NONBLOCK` (a FIFO without a reader fails at once with ENXIO instead
 * of waiting for one forever), and a FIFO or pipe is written through the event loop as a socket
 * is, so a reader that never reads stalls only this promise and SIGTERM still ends the process.
 * (A blocking open or write runs in libuv's thread pool, and Node waits for those threads before
 * it exits, even on a signal it handles.)
 * @throws the system error (`ENXIO`, `EPIPE`, `ENOSPC`, …) when the file cannot be written.
 */
async function writeOutputFile(path: string, text: string): Promise<void> {
  let fd = await openFile(
    path,
    constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NONBLOCK,
    0o666,
  )
  const stats = await statFile(fd).catch(async (error: unknown) => {
    await closeFile(fd)
    throw error
  })
  if (stats.isFIFO()) return writePipe(fd, text)
  if (stats.isCharacterDevice()) {
    // A terminal opened without blocking may refuse a write it cannot take at once (EAGAIN): reopen it blocking;
    // opening a device does not wait.
    await closeFile(fd)
    fd = await openFile(path, constants.O_WRONLY)
  }
  try {
    await writeWhole(fd, text)
  } finally {
    await closeFile(fd)
  }
}

/** Writes `text` to a pipe through the event loop; the socket closes the descriptor. */
function writePipe(fd: number, text: string): Promise<void> {
  const socket = new Socket({ fd, readable: false, writable: true })
  return new Promise<void>((done, failed) => {
    socket.once('error', (error) => {
      socket.destroy()
      failed(error)
    })
    socket.end(text, (error?: Error | null) => {
      socket.destroy()
      if (error) failed(error)
      else done()
    })
  })
}
