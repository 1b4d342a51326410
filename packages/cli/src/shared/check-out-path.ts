import type { Stats } from 'node:fs'
import { constants } from 'node:fs'
import { access, realpath, stat } from 'node:fs/promises'
import { basename, dirname, resolve } from 'node:path'
import { UsageError } from './usage-error.ts'

/** Who writes the file, for messages. */
export interface OutputWriter {
  /** The flag that names the file. Default `--out`. */
  readonly flag?: string
  /** The command that writes it. Default `warmfold bench`. */
  readonly command?: string
  /** What it writes. Default `the JSON document`. */
  readonly document?: string
  /**
   * Files the command reads or keeps (a log, a store's database), which the output must not be:
   * writing the output there would destroy them. Each with what it is, for the message.
   */
  readonly inputs?: ReadonlyArray<{ readonly path: string; readonly what: string }>
}

/**
 * Checks, before a run starts, that the output file of `writer.flag` can be written: it is not
 * a folder, its folder exists (it is not created: a mistyped path should not leave folders
 * behind) and the file (or, when it does not exist yet, its folder) is writable. It must not be
 * one of `writer.inputs` (the same file under any name: a symlink, `./`, a hard link). Devices
 * such as `/dev/stdout` and FIFOs pass (`openOutputFile` then refuses a FIFO nobody reads), a
 * socket does not. Nothing is created or changed.
 * @throws UsageError naming the flag, the path and what is wrong with it.
 */
export async function checkOutPath(path: string, writer: OutputWriter = {}): Promise<void> {
  const { flag = '--out', command = 'warmfold bench', document = 'the JSON document', inputs = [] } = writer
  if (path.trim() === '' || /[/\\]$/.test(path))
    throw new UsageError(`${flag} must name a file, got ${JSON.stringify(path)}`)
  const file = resolve(path)
  const folder = dirname(file)
  const where = `${flag} ${JSON.stringify(path)}`
  // ENOTDIR: a parent is a file; the folder check below says which.
  const target = await statIfExists(file, where)
  if (target?.isDirectory()) throw new UsageError(`${where} is a folder; name a file to write ${document} to`)
  for (const input of inputs) {
    if (await sameFile(file, target, input.path))
      throw new UsageError(
        `${where} is ${input.what} ${JSON.stringify(input.path)}: ` +
          `writing ${document} there would overwrite it; name another file`,
      )
  }
  if (target?.isSocket()) throw new UsageError(`${where} is a socket; name a file to write ${document} to`)
  // A file that exists is in a folder; its own write permission is what counts.
  if (target) await checkWritable(where, file, file)
  else await checkFolder(where, folder, command, `${where}: the folder ${folder}`)
}

/**
 * Checks that `folder` exists (it is not created: a mistyped path should not leave folders behind), is a folder and
 * is writable.
 * @throws UsageError starting with `where` (`cannotCheck` when `folder` cannot be checked at all).
 */
export async function checkFolder(where: string, folder: string, command: string, cannotCheck = where): Promise<void> {
  const found = await statIfExists(folder, cannotCheck)
  if (!found)
    throw new UsageError(
      `${where}: the folder ${folder} does not exist (${command} does not create folders; create it first)`,
    )
  if (!found.isDirectory()) throw new UsageError(`${where}: ${folder} is not a folder`)
  await checkWritable(where, folder, `the folder ${folder}`)
}

async function checkWritable(where: string, path: string, shown: string): Promise<void> {
  await access(path, constants.W_OK).catch(() => {
    throw new UsageError(`${where} is not writable: no write permission on ${shown}`)
  })
}

/**
 * The stats of `path`, or undefined when it or a folder on its way does not exist.
 * @throws UsageError `<where> cannot be checked: …` for any other failure.
 */
export async function statIfExists(path: string, where: string): Promise<Stats | undefined> {
  return stat(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return undefined
    throw new UsageError(`${where} cannot be checked: ${error.message}`)
  })
}

/**
 * Whether the output `file` (its stats when it exists) is `input`: the same device and inode, or, while either does
 * not exist yet, the same absolute path.
 */
async function sameFile(file: string, target: Stats | undefined, input: string): Promise<boolean> {
  const inputStats = await stat(input).catch(() => undefined)
  if (target && inputStats) return target.dev === inputStats.dev && target.ino === inputStats.ino
  // Not there yet (a session log or database the run will create): compare where both would be, through symlinked
  // folders too.
  return (await canonicalPath(file)) === (await canonicalPath(resolve(input)))
}

/** `file` with its folder's symlinks resolved (the file itself need not exist). */
async function canonicalPath(file: string): Promise<string> {
  const folder = await realpath(dirname(file)).catch(() => dirname(file))
  return resolve(folder, basename(file))
}
