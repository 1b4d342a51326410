import { createHash, randomUUID } from 'node:crypto'
import { readFileSync, rmSync } from 'node:fs'
import { link, open, rename, rm, writeFile } from 'node:fs/promises'
import { describeNonFile } from './durable-fs.ts'
import type { ProcessIdentity } from './process-liveness.ts'
import { currentProcess, liveness } from './process-liveness.ts'
import { SessionError } from './session-error.ts'

interface LockOwner extends ProcessIdentity {
  readonly token: string
}

/** One instance of a lock file as read: which inode, when it last changed, what it held. */
interface LockInstance {
  readonly ino: bigint
  readonly ctimeNs: bigint
  readonly content: string
  /** The parsed owner, or `undefined` when the file is empty or not an owner record. */
  readonly owner?: LockOwner
}

/** How many times `acquire` looks again after the lock changed under it before giving up. */
const ACQUIRE_ATTEMPTS = 5
/** Bound on abandoned takeover claims stacked on one stale lock (each needs a crash mid-takeover). */
const MAX_CLAIM_LEVEL = 32

/**
 * An exclusive write lock on one session file, held as `<file>.lock`, a small JSON record of
 * the owner (pid, host, boot id, process start time, a random token).
 *
 * - **Taking a free lock** writes the record to a private temp file and `link`s it to the lock
 *   path: `link` fails with `EEXIST` when any lock file exists, so exactly one of any number of
 *   racing writers gets it, and the lock file is complete from the moment it exists (an empty
 *   or unparsable lock file was never written by this code and is garbage).
 * - **A live owner** (this host, see `liveness`) makes `acquire` fail with
 *   `SessionError('LOCKED')` naming the lock file and the owner. An owner on another host
 *   always counts as live.
 * - **A stale lock** (its owner exited, is a zombie, or the pid was reused; or the file is
 *   empty or garbage) is replaced without a check-then-act window: the contender first takes
 *   a *claim* on that exact lock instance, `<lock>.takeover-<key>.<level>`, where `key` hashes
 *   the instance's inode, change time and content, again by `link`, so one contender per
 *   instance wins. Holding the claim it re-reads the lock; only if it is still the same
 *   instance does it `rename` its own record over it, since nobody else may change that
 *   instance now (its owner is gone and every other contender needs the claim). A claim whose
 *   owner died is passed by taking the next level. The winner re-reads the lock to confirm its
 *   token and removes the claims; a loser fails with `LOCKED`.
 *
 * Lock files are not fsynced: a lock only matters while its owner runs, and a crash of the
 * machine ends every owner (a lock left by an earlier boot is stale by its boot id).
 */
export class SessionLock {
  private constructor(
    readonly path: string,
    private readonly token: string,
  ) {}

  /** Takes the lock at `path` for session `sessionId`. */
  static async acquire(path: string, sessionId: string): Promise<SessionLock> {
    const owner: LockOwner = { ...currentProcess(), token: randomUUID() }
    const temp = `${path}.${owner.token}.tmp`
    await writeFile(temp, `${JSON.stringify(owner)}\n`, { flag: 'wx', mode: 0o600 })
    try {
      for (let attempt = 0; attempt < ACQUIRE_ATTEMPTS; attempt++) {
        if (await tryLink(temp, path)) return new SessionLock(path, owner.token)
        const held = await readInstance(path)
        if (held === undefined) continue
        if (held.owner) {
          const state = liveness(held.owner)
          if (state.alive) throw lockedBy(sessionId, path, held.owner, state.reason)
        }
        const outcome = await takeOver(path, temp, held, owner.token)
        if (outcome === 'taken') return new SessionLock(path, owner.token)
        if (typeof outcome === 'object') {
          throw new SessionError(
            'LOCKED',
            `session ${sessionId}: pid ${outcome.pid} on ${outcome.hostname} is taking over the stale lock ` +
              `${path} right now; try again`,
          )
        }
      }
      throw new SessionError(
        'LOCKED',
        `session ${sessionId}: the lock ${path} changed ${ACQUIRE_ATTEMPTS} times while it was being taken; ` +
          `another writer is opening the session`,
      )
    } finally {
      await rm(temp, { force: true })
    }
  }

  /** Releases the lock if this instance still owns it, before returning. */
  releaseSync(): void {
    let holder: Partial<LockOwner> | undefined
    try {
      holder = JSON.parse(readFileSync(this.path, 'utf8')) as Partial<LockOwner>
    } catch {
      return
    }
    // Only the owner's own token may remove the file: a live owner is never judged stale, so
    // nothing replaces it between this read and the removal.
    if (holder?.token === this.token) rmSync(this.path, { force: true })
  }
}

/**
 * Replaces the stale lock instance `held` with the record in `temp`. Returns `'taken'`,
 * `'changed'` when the lock is no longer that instance (look again), or the live owner of a
 * claim on it (another contender is taking it over).
 */
async function takeOver(
  path: string,
  temp: string,
  held: LockInstance,
  token: string,
): Promise<'taken' | 'changed' | LockOwner> {
  const key = createHash('sha256').update(`${held.ino}:${held.ctimeNs}:${held.content}`).digest('hex').slice(0, 16)
  const abandoned: string[] = []
  for (let level = 1; level <= MAX_CLAIM_LEVEL; level++) {
    const claim = `${path}.takeover-${key}.${level}`
    if (!(await tryLink(temp, claim))) {
      const claimant = await readInstance(claim)
      // A claim that vanished was released by a contender that is done with it: look again.
      if (claimant === undefined) return 'changed'
      if (claimant.owner && liveness(claimant.owner).alive) return claimant.owner
      abandoned.push(claim) // its contender died mid-takeover: step over it
      continue
    }
    let replaced = false
    try {
      if (await isInstance(path, held)) {
        await rename(temp, path)
        replaced = true
      }
    } finally {
      // Once the lock is no longer `held`, a claim on it is worthless: anyone holding one
      // re-reads the lock, sees another instance and backs off. While it may still be `held`,
      // only this contender's own claim may go, or a newcomer could take a level a live
      // contender above it already passed.
      const lockChanged = replaced || !(await isInstance(path, held))
      for (const stale of lockChanged ? [...abandoned, claim] : [claim]) await rm(stale, { force: true })
    }
    if (!replaced) return 'changed'
    const after = await readInstance(path)
    if (after?.owner?.token !== token) {
      throw new SessionError(
        'LOCKED',
        `the lock ${path} was replaced right after this store took it ` +
          `over${after?.owner ? ` (now held by pid ${after.owner.pid} on ${after.owner.hostname})` : ''}; another ` +
          `writer does not follow the locking protocol`,
      )
    }
    return 'taken'
  }
  throw new SessionError(
    'LOCKED',
    `the stale lock ${path} has ${MAX_CLAIM_LEVEL} abandoned takeover claims (${path}.takeover-${key}.*); remove ` +
      `them and the lock if no writer runs`,
  )
}

/** Whether the lock at `path` is still the instance `held`. */
async function isInstance(path: string, held: LockInstance): Promise<boolean> {
  const now = await readInstance(path)
  return now !== undefined && now.ino === held.ino && now.ctimeNs === held.ctimeNs && now.content === held.content
}

/** `link(from, to)`: `true` when it was created, `false` when `to` exists. */
async function tryLink(from: string, to: string): Promise<boolean> {
  try {
    await link(from, to)
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false
    throw error
  }
}

/** Reads one lock or claim file; `undefined` when it does not exist. */
async function readInstance(path: string): Promise<LockInstance | undefined> {
  let handle
  try {
    handle = await open(path, 'r')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
  try {
    const stat = await handle.stat({ bigint: true })
    const other = describeNonFile(stat)
    if (other)
      throw new SessionError('IO', `the lock path ${path} is ${other}, not a lock file; remove it if no writer runs`)
    const content = await handle.readFile('utf8')
    const owner = parseOwner(content)
    return { ino: stat.ino, ctimeNs: stat.ctimeNs, content, ...(owner ? { owner } : {}) }
  } finally {
    await handle.close()
  }
}

function parseOwner(content: string): LockOwner | undefined {
  let parsed: unknown
  try {
    parsed = JSON.parse(content)
  } catch {
    return undefined
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined
  const owner = parsed as Record<string, unknown>
  if (
    !Number.isInteger(owner.pid) ||
    (owner.pid as number) <= 0 ||
    typeof owner.hostname !== 'string' ||
    typeof owner.token !== 'string'
  )
    return undefined
  return {
    pid: owner.pid as number,
    hostname: owner.hostname,
    token: owner.token,
    ...(typeof owner.boot === 'string' ? { boot: owner.boot } : {}),
    ...(Number.isInteger(owner.start) ? { start: owner.start as number } : {}),
  }
}

function lockedBy(sessionId: string, path: string, owner: LockOwner, reason: string): SessionError {
  const here = owner.pid === process.pid && owner.hostname === currentProcess().hostname
  const who = `pid ${owner.pid} on ${owner.hostname}${here ? ' (another store in this process)' : ''}`
  return new SessionError(
    'LOCKED',
    `session ${sessionId} is already open for writing by ${who} (${reason}); lock file ${path}. Close the other ` +
      `store first; remove the lock file only if that writer is gone.`,
  )
}
