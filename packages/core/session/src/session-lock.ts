import { randomUUID } from 'node:crypto'
import { readFileSync, rmSync } from 'node:fs'
import { readFile, rm, writeFile } from 'node:fs/promises'
import { hostname } from 'node:os'
import { SessionError } from './session-error.ts'

interface LockOwner {
  pid: number
  hostname: string
  token: string
}

/**
 * An exclusive write lock on one session file, held as a `<file>.lock` created with `wx`.
 *
 * A lock left by a process that no longer runs on this host is taken over; a live owner (another
 * store, in this process or another) makes `acquire` fail with `SessionError('LOCKED')` naming
 * the lock file and the owner's pid, so two writers never interleave silently.
 */
export class SessionLock {
  private readonly token = randomUUID()

  private constructor(readonly path: string) {}

  /** Takes the lock at `path`. */
  static async acquire(path: string, sessionId: string): Promise<SessionLock> {
    const lock = new SessionLock(path)
    const owner: LockOwner = { pid: process.pid, hostname: hostname(), token: lock.token }
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        await writeFile(path, `${JSON.stringify(owner)}\n`, { flag: 'wx' })
        return lock
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      }
      const holder = await readOwner(path)
      if (holder && attempt === 0 && holder.hostname === owner.hostname && !isAlive(holder.pid)) {
        await rm(path, { force: true })
        continue
      }
      const who = holder ? `pid ${holder.pid} on ${holder.hostname}${holder.pid === process.pid ? ' (another store in this process)' : ''}` : 'an unknown owner'
      throw new SessionError(
        'LOCKED',
        `session ${sessionId} is already open for writing by ${who}; lock file ${path}. Close the other store first; remove the lock file only if that writer is gone.`,
      )
    }
    throw new SessionError('LOCKED', `session ${sessionId}: could not take the lock ${path}`)
  }

  /** Releases the lock if this instance still owns it. */
  async release(): Promise<void> {
    this.releaseSync()
  }

  /** Releases the lock if this instance still owns it, before returning. */
  releaseSync(): void {
    let holder: LockOwner | undefined
    try {
      holder = JSON.parse(readFileSync(this.path, 'utf8')) as LockOwner
    } catch {
      return
    }
    if (holder.token === this.token) rmSync(this.path, { force: true })
  }
}

async function readOwner(path: string): Promise<LockOwner | undefined> {
  try {
    const parsed = JSON.parse(await readFile(path, 'utf8')) as LockOwner
    return typeof parsed.pid === 'number' ? parsed : undefined
  } catch {
    return undefined
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}
