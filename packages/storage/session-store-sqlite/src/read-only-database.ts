import { accessSync, constants, existsSync } from 'node:fs'
import { dirname } from 'node:path'
import { SessionError } from '@warmfold/session'

/** SQLite's primary result codes (libsql puts the extended code in an error's `rawCode`). */
const SQLITE_READONLY = 8
const SQLITE_CANTOPEN = 14

/**
 * `IO` for a database at `path` this process cannot write, when `error` says so: the engine
 * refused to write (`SQLITE_READONLY`), or could not open a file it needs (`SQLITE_CANTOPEN`)
 * where the database, its `-wal` or `-shm` file, or the folder it must create them in cannot be
 * written. Names the path and why, and says that the sessions can still be read; the engine's
 * error is the `cause`. `undefined` for any other error.
 */
export function readOnlyDatabase(path: string, error: unknown): SessionError | undefined {
  const code = cannotWriteCode(error)
  if (code === undefined) return undefined
  const reason = existsSync(path) ? readOnlyReason(path) : undefined
  if (reason === undefined && code === SQLITE_CANTOPEN) return undefined
  return new SessionError(
    'IO',
    `the SQLite session store ${path} is read-only for this process: ` +
      `${reason ?? `the engine refused to write (${(error as Error).message})`}. ` +
      ('It cannot be opened for writing (nothing was changed); its sessions can still be read (ctx.sessions.read, ' +
        'warmfold report --store sqlite:PATH)'),
    { cause: error },
  )
}

/** `SQLITE_READONLY` or `SQLITE_CANTOPEN` when the engine's `error` is one of them, else `undefined`. */
export function cannotWriteCode(error: unknown): number | undefined {
  const rawCode = (error as { rawCode?: unknown } | undefined)?.rawCode
  const code = typeof rawCode === 'number' ? rawCode & 0xff : undefined
  return code === SQLITE_READONLY || code === SQLITE_CANTOPEN ? code : undefined
}

/** Which file (or folder) this process cannot write, or `undefined`. */
function readOnlyReason(path: string): string | undefined {
  const file = refused(path)
  if (file) return `the file cannot be written (${file})`
  for (const suffix of ['-wal', '-shm']) {
    if (existsSync(path + suffix)) {
      const companion = refused(path + suffix)
      if (companion) return `${path}${suffix} cannot be written (${companion})`
    } else {
      const folder = refused(dirname(path))
      if (folder)
        return (
          `its folder ${dirname(path)} cannot be written (${folder}), and SQLite must create ${path}${suffix} ` +
          `there to write`
        )
    }
  }
  return undefined
}

/** Why this process may not write `file` (the system's code, e.g. EACCES or EROFS), or `undefined` when it may. */
function refused(file: string): string | undefined {
  try {
    accessSync(file, constants.W_OK)
    return undefined
  } catch (error) {
    return (error as NodeJS.ErrnoException).code ?? 'refused'
  }
}
