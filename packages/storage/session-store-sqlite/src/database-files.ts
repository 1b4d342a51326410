import type { BigIntStats } from 'node:fs'
import { fstatSync, openSync, readSync, statSync } from 'node:fs'
import { endianness } from 'node:os'
import { SessionError } from '@warmfold/session'

/** `SQLite format 3\0`: the first 16 bytes of every SQLite database file. */
const DATABASE_MAGIC = Buffer.from('SQLite format 3\0', 'latin1')
/** The two magic numbers a write-ahead log starts with (big-endian; the last bit is its checksum byte order). */
const WAL_MAGICS = new Set([0x377f0682, 0x377f0683])
/** A WAL's header, and each frame's header before its page. */
const WAL_HEADER_BYTES = 32
const WAL_FRAME_HEADER_BYTES = 24
/** The wal-index header's version field: the only shared-memory format SQLite has ever had. */
const WAL_INDEX_VERSION = 3007000

/**
 * One file as the connection opened it: device and inode, which a file put in its place does not
 * share, and a read-only descriptor of it (see {@link descriptorOf}).
 */
interface OpenedFile {
  readonly dev: bigint
  readonly ino: bigint
  readonly descriptor: number
}

type Role = 'database' | 'wal' | 'shm'

/**
 * The three files of an open SQLite database in WAL mode (the database, its write-ahead log
 * `-wal` and its shared-memory index `-shm`), as the connection had them when it opened, so a
 * store can tell whether its path still names them.
 *
 * SQLite keeps writing through the file descriptors it opened: after the database or its WAL is
 * deleted or replaced, commits still succeed, into files nobody will open again; after the WAL
 * is truncated, the transactions committed in it are gone, and later commits land behind a hole
 * that recovery stops at. None of this is reported by the engine, so a store that acknowledged
 * such a commit would lose data silently. `checkBeforeWrite` (under the write lock) and
 * `checkSameFiles` throw `SessionError('IO')` naming the path and what happened instead.
 */
export class DatabaseFiles {
  /** The database file's size at the last check: it never shrinks but by a VACUUM, which leaves a consistent header. */
  private lastSize: bigint

  private constructor(
    readonly path: string,
    private readonly opened: Readonly<Record<Role, OpenedFile>>,
    size: bigint,
  ) {
    this.lastSize = size
  }

  /**
   * Records the identity of the database at `path` and of its `-wal` and `-shm` files, for a
   * connection that has just opened it in WAL mode and read from it (SQLite creates the WAL and
   * the index at the first read and keeps them while any connection is open).
   */
  static observe(path: string): DatabaseFiles {
    const database = descriptorOf(path, 'database')
    const opened = { database, wal: descriptorOf(path, 'wal'), shm: descriptorOf(path, 'shm') }
    return new DatabaseFiles(path, opened, fstatSync(database.descriptor, { bigint: true }).size)
  }

  /**
   * Call inside a write transaction, before writing: the files at the path must be the ones
   * the connection opened, the database file must not have been cut short, and the WAL must
   * still hold every frame the index says was committed. The write lock keeps every other writer
   * (and every checkpoint that would truncate the WAL) out, so what is read here is stable.
   */
  checkBeforeWrite(): void {
    this.checkDatabase()
    this.checkIdentity('wal')
    this.checkIdentity('shm')
    const index = this.readWalIndex()
    const wal = statOf(this.path, 'wal')
    const needed =
      index.frames === 0 ? 0n : BigInt(WAL_HEADER_BYTES + index.frames * (WAL_FRAME_HEADER_BYTES + index.pageSize))
    if (wal.size < needed) {
      throw failure(
        this.path,
        `its write-ahead log ${this.path}-wal was truncated to ${wal.size} bytes while this store had it open, but ` +
          `the ${index.frames} frames committed in it need ${needed}: ` +
          'the transactions committed since the last checkpoint are lost',
      )
    }
    this.checkWalHeader()
  }

  /**
   * Call after a commit, before acknowledging it (or before trusting what the connection reads):
   * the files the path names must still be the ones the connection writes to, the database file
   * not cut short, the WAL not stripped of its header. (Whether the WAL lost frames is judged
   * under the write lock by the next `checkBeforeWrite`: without the lock another writer's commit
   * or checkpoint can be half-seen here.)
   */
  checkSameFiles(): void {
    this.checkDatabase()
    this.checkIdentity('wal')
    this.checkIdentity('shm')
    this.checkWalHeader()
  }

  private checkDatabase(): void {
    const stats = this.checkIdentity('database')
    const header = readPrefix(this.opened.database, 100)
    if (header.length < 100 || !header.subarray(0, 16).equals(DATABASE_MAGIC)) {
      const what =
        header.length < 100
          ? `was truncated to ${stats.size} bytes`
          : 'was overwritten (its first bytes are no longer an SQLite header)'
      throw failure(this.path, `the database file ${what} while this store had it open`)
    }
    // Page size 1 means 65,536; the page count (offset 28) is what the last checkpoint wrote.
    const pageSize = header.readUInt16BE(16) === 1 ? 65_536 : header.readUInt16BE(16)
    const counted = BigInt(header.readUInt32BE(28)) * BigInt(pageSize)
    // Shorter than before and than its own header says: cut short, not vacuumed. (A checkpoint
    // in another process grows the file after writing the header, so growth is never judged.)
    if (stats.size < this.lastSize && stats.size < counted) {
      throw failure(
        this.path,
        `the database file was truncated from ${this.lastSize} to ${stats.size} bytes while this store had it ` +
          `open (its header counts ${counted})`,
      )
    }
    this.lastSize = stats.size
  }

  /** The file of `role` at the path, failing when it is gone or another file. */
  private checkIdentity(role: Role): BigIntStats {
    const stats = statOf(this.path, role)
    const opened = this.opened[role]
    if (stats.dev !== opened.dev || stats.ino !== opened.ino) {
      throw failure(
        this.path,
        `${describe(this.path, role)} was replaced by another file while this store had it open (device ` +
          `${opened.dev} inode ${opened.ino} then, device ${stats.dev} inode ${stats.ino} now)${lost(role)}`,
      )
    }
    return stats
  }

  /** A WAL long enough to have a header must start with one (a WAL cut to nothing and written on has zeros there). */
  private checkWalHeader(): void {
    const header = readPrefix(this.opened.wal, WAL_HEADER_BYTES)
    if (header.length === WAL_HEADER_BYTES && !WAL_MAGICS.has(header.readUInt32BE(0))) {
      throw failure(
        this.path,
        `its write-ahead log ${this.path}-wal lost its header while this store had it open (truncated, then ` +
          `written on): the transactions committed in it are lost`,
      )
    }
  }

  /**
   * The wal-index header at the start of `-shm` (two copies of 48 bytes in the machine's byte
   * order, documented in SQLite's walformat): how many frames of the WAL are committed, and the page size.
   */
  private readWalIndex(): { frames: number; pageSize: number } {
    const header = readPrefix(this.opened.shm, 96)
    const little = endianness() === 'LE'
    const u32 = (offset: number) => (little ? header.readUInt32LE(offset) : header.readUInt32BE(offset))
    const u16 = (offset: number) => (little ? header.readUInt16LE(offset) : header.readUInt16BE(offset))
    if (header.length < 96 || u32(0) !== WAL_INDEX_VERSION || !header.subarray(0, 48).equals(header.subarray(48, 96))) {
      throw failure(
        this.path,
        `its shared-memory index ${this.path}-shm is not the wal-index the open connection keeps ` +
          `(${header.length} bytes, version ${header.length >= 4 ? u32(0) : 'missing'})`,
      )
    }
    const pageSize = u16(14) === 1 ? 65_536 : u16(14)
    return { frames: u32(16), pageSize }
  }
}

/** `IO` for a store whose files at `path` are no longer the ones its connection writes to. */
function failure(path: string, what: string, cause?: unknown): SessionError {
  return new SessionError(
    'IO',
    `the SQLite session store ${path} cannot be written: ${what}. Nothing more is written there; release this ` +
      `store's sessions and open them again to use what the path names now`,
    cause === undefined ? undefined : { cause },
  )
}

function fileOf(path: string, role: Role): string {
  return role === 'database' ? path : `${path}-${role}`
}

function describe(path: string, role: Role): string {
  if (role === 'database') return 'the database file'
  return role === 'wal' ? `its write-ahead log ${path}-wal` : `its shared-memory index ${path}-shm`
}

/** What the loss of a file of `role` costs, for messages. */
function lost(role: Role): string {
  if (role === 'wal') return ': the transactions committed in it since the last checkpoint are lost with it'
  if (role === 'shm') return ': other connections no longer see the index this one updates'
  return ''
}

/** A missing file (or one that cannot be examined) of database `path` is `IO` naming it. */
function unavailable(path: string, role: Role, error: unknown): SessionError {
  const gone = (error as NodeJS.ErrnoException).code === 'ENOENT'
  const what = gone
    ? `was deleted while this store had it open${lost(role)}`
    : `cannot be examined (${(error as Error).message})`
  return failure(path, `${describe(path, role)} ${what}`, error)
}

function statOf(path: string, role: Role): BigIntStats {
  try {
    return statSync(fileOf(path, role), { bigint: true })
  } catch (error) {
    throw unavailable(path, role, error)
  }
}

/**
 * Read-only descriptors of database files, by device and inode, never closed. POSIX drops every
 * lock a process holds on a file when the process closes *any* descriptor of it, so closing one
 * of ours would silently drop the locks SQLite's connections in this process hold there (tried:
 * another process then took the write lock in the middle of this one's flush). SQLite's own unix
 * layer keeps its descriptors open for the same reason. At most three per database file a
 * process opened (and per file found in its place).
 */
const descriptors = new Map<string, OpenedFile>()

/**
 * A read-only descriptor of the file of `role` at database `path`, opened once per process; it
 * also keeps the file's inode from being reused while the process runs, so a new file at the
 * path never passes for the old one.
 */
function descriptorOf(path: string, role: Role): OpenedFile {
  const stats = statOf(path, role)
  const known = descriptors.get(`${stats.dev}:${stats.ino}`)
  if (known) return known
  let descriptor: number
  try {
    descriptor = openSync(fileOf(path, role), 'r')
  } catch (error) {
    throw unavailable(path, role, error)
  }
  // The file at the path may have changed since the stat: what counts is what was opened.
  const opened = fstatSync(descriptor, { bigint: true })
  const key = `${opened.dev}:${opened.ino}`
  const earlier = descriptors.get(key)
  // A known file after all: this descriptor stays open too (see `descriptors`), unused.
  if (earlier) return earlier
  const file = { dev: opened.dev, ino: opened.ino, descriptor }
  descriptors.set(key, file)
  return file
}

/** Up to `length` bytes from the start of `file` (fewer when it is shorter now). */
function readPrefix(file: OpenedFile, length: number): Buffer {
  const buffer = Buffer.alloc(length)
  return buffer.subarray(0, readSync(file.descriptor, buffer, 0, length, 0))
}
