import { constants } from 'node:fs'
import { access, stat } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { UsageError } from '../shared/usage-error.ts'

/** The session id (and file name without `.jsonl`) of one bench run's log. */
export function benchSessionId(strategy: string, window: number): string {
  return `${strategy}-${window}`
}

/**
 * Checks, before a run starts, that `--keep-sessions` can take a session log for each of
 * `ids`: `folder` is an existing, writable folder (it is not created: a mistyped path should
 * not leave folders behind) and none of the `<id>.jsonl` files exists yet (a kept log is never
 * appended to or overwritten) or is named twice. Nothing is created or changed.
 * @throws UsageError naming the folder or the file and what is wrong with it.
 */
export async function checkSessionsFolder(folder: string, ids: readonly string[]): Promise<void> {
  if (folder.trim() === '') throw new UsageError('--keep-sessions must name a folder, got ""')
  const path = resolve(folder)
  const found = await stat(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return undefined
    throw new UsageError(`--keep-sessions ${JSON.stringify(folder)} cannot be checked: ${error.message}`)
  })
  if (!found)
    throw new UsageError(
      `--keep-sessions ${JSON.stringify(folder)}: the folder ${path} does not exist ` +
        '(warmfold bench does not create folders; create it first)',
    )
  if (!found.isDirectory()) throw new UsageError(`--keep-sessions ${JSON.stringify(folder)}: ${path} is not a folder`)
  try {
    await access(path, constants.W_OK)
  } catch {
    throw new UsageError(
      `--keep-sessions ${JSON.stringify(folder)} is not writable: no write permission on the folder ${path}`,
    )
  }
  const seen = new Set<string>()
  for (const id of ids) {
    const file = join(path, `${id}.jsonl`)
    if (seen.has(id))
      throw new UsageError(`--keep-sessions: two runs would write ${file} (a window or strategy is listed twice)`)
    seen.add(id)
    const existing = await stat(file).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined
      throw new UsageError(`--keep-sessions: ${file} cannot be checked: ${error.message}`)
    })
    if (existing)
      throw new UsageError(
        `--keep-sessions: ${file} exists already (a kept session log is never overwritten); ` +
          'move it away or choose another folder',
      )
  }
}
