import { constants } from 'node:fs'
import { access, stat } from 'node:fs/promises'
import { dirname, resolve } from 'node:path'
import { UsageError } from './usage-error.ts'

/** Who writes the file, for messages. */
export interface OutputWriter {
  /** The flag that names the file. Default `--out`. */
  readonly flag?: string
  /** The command that writes it. Default `warmfold bench`. */
  readonly command?: string
  /** What it writes. Default `the JSON document`. */
  readonly document?: string
}

/**
 * Checks, before a run starts, that the output file of `writer.flag` can be written: it is not
 * a folder, its folder exists (it is not created: a mistyped path should not leave folders
 * behind) and the file (or, when it does not exist yet, its folder) is writable. Devices such as
 * `/dev/stdout` pass. Nothing is created or changed.
 * @throws UsageError naming the flag, the path and what is wrong with it.
 */
export async function checkOutPath(path: string, writer: OutputWriter = {}): Promise<void> {
  const { flag = '--out', command = 'warmfold bench', document = 'the JSON document' } = writer
  if (path.trim() === '' || /[/\\]$/.test(path)) throw new UsageError(`${flag} must name a file, got ${JSON.stringify(path)}`)
  const file = resolve(path)
  const folder = dirname(file)
  const target = await stat(file).catch((error: NodeJS.ErrnoException) => {
    // ENOTDIR: a parent is a file; the folder check below says which.
    if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return undefined
    throw new UsageError(`${flag} ${JSON.stringify(path)} cannot be checked: ${error.message}`)
  })
  if (target?.isDirectory()) throw new UsageError(`${flag} ${JSON.stringify(path)} is a folder; name a file to write ${document} to`)
  const parent = await stat(folder).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return undefined
    throw new UsageError(`${flag} ${JSON.stringify(path)}: the folder ${folder} cannot be checked: ${error.message}`)
  })
  if (!parent) throw new UsageError(`${flag} ${JSON.stringify(path)}: the folder ${folder} does not exist (${command} does not create folders; create it first)`)
  if (!parent.isDirectory()) throw new UsageError(`${flag} ${JSON.stringify(path)}: ${folder} is not a folder`)
  try {
    await access(target ? file : folder, constants.W_OK)
  } catch {
    throw new UsageError(`${flag} ${JSON.stringify(path)} is not writable: no write permission on ${target ? file : `the folder ${folder}`}`)
  }
}
