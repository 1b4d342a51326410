import { join, resolve } from 'node:path'
import { checkFolder, statIfExists } from '../shared/check-out-path.ts'
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
  await checkFolder(`--keep-sessions ${JSON.stringify(folder)}`, path, 'warmfold bench')
  const seen = new Set<string>()
  for (const id of ids) {
    const file = join(path, `${id}.jsonl`)
    if (seen.has(id))
      throw new UsageError(`--keep-sessions: two runs would write ${file} (a window or strategy is listed twice)`)
    seen.add(id)
    if (await statIfExists(file, `--keep-sessions: ${file}`))
      throw new UsageError(
        `--keep-sessions: ${file} exists already (a kept session log is never overwritten); ` +
          'move it away or choose another folder',
      )
  }
}
