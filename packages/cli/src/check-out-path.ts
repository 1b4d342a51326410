import { constants } from 'node:fs'
import { access, stat } from 'node:fs/promises'
import { dirname, resolve } from 'node:path'
import { UsageError } from './usage-error.ts'

/**
 * Checks, before a run starts, that `--out` can be written: it is not a folder, its folder
 * exists (it is not created: a mistyped path should not leave folders behind) and the file (or,
 * when it does not exist yet, its folder) is writable. Devices such as `/dev/stdout` pass.
 * Nothing is created or changed. `writer` names, in messages, the command and what it writes.
 * @throws UsageError naming the path and what is wrong with it.
 */
export async function checkOutPath(path: string, writer: { command: string; document: string } = { command: 'warmfold bench', document: 'the JSON document' }): Promise<void> {
  if (path.trim() === '' || /[/\\]$/.test(path)) throw new UsageError(`--out must name a file, got ${JSON.stringify(path)}`)
  const file = resolve(path)
  const folder = dirname(file)
  const target = await stat(file).catch((error: NodeJS.ErrnoException) => {
    // ENOTDIR: a parent is a file; the folder check below says which.
    if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return undefined
    throw new UsageError(`--out ${JSON.stringify(path)} cannot be checked: ${error.message}`)
  })
  if (target?.isDirectory()) throw new UsageError(`--out ${JSON.stringify(path)} is a folder; name a file to write ${writer.document} to`)
  const parent = await stat(folder).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return undefined
    throw new UsageError(`--out ${JSON.stringify(path)}: the folder ${folder} cannot be checked: ${error.message}`)
  })
  if (!parent) throw new UsageError(`--out ${JSON.stringify(path)}: the folder ${folder} does not exist (${writer.command} does not create folders; create it first)`)
  if (!parent.isDirectory()) throw new UsageError(`--out ${JSON.stringify(path)}: ${folder} is not a folder`)
  try {
    await access(target ? file : folder, constants.W_OK)
  } catch {
    throw new UsageError(`--out ${JSON.stringify(path)} is not writable: no write permission on ${target ? file : `the folder ${folder}`}`)
  }
}
