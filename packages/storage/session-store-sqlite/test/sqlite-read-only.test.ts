import { execFileSync } from 'node:child_process'
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { createUserMessage } from '@warmfold/llm'
import type { Session } from '@warmfold/session'
import Database from 'libsql'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SqliteSessionBackend } from '../src/index.ts'

// A database this process cannot write: a copy someone made read-only (mode 0444), in a folder
// it cannot write either, as `warmfold report --store sqlite:PATH` meets it. File modes do not
// stop root (its capabilities override them), and CI runs the tests as root: so the reader is a
// child process started, when the tests run as root, through `setpriv` with every capability
// dropped. It stays root, so it can still read the repository wherever CI cloned it (a folder
// only root may enter), but the kernel now enforces the modes on it as for any user's copy.

const ROOT = resolve(import.meta.dirname, '../../../..')
const READER = resolve(import.meta.dirname, 'fixtures/read-only-reader.ts')

type Outcome = { ok: unknown } | { code: string; message: string }

/** The command that runs the reader: through `setpriv` without capabilities when the tests run as root. */
function unprivileged(argv: string[]): [string, string[]] {
  if (process.getuid?.() !== 0) return [argv[0] as string, argv.slice(1)]
  try {
    execFileSync('setpriv', ['--version'], { stdio: 'ignore' })
  } catch (error) {
    throw new Error(
      `run as root, these tests read the databases through setpriv (util-linux) with every capability dropped, and it is missing (${(error as Error).message}): install util-linux`,
      { cause: error },
    )
  }
  return ['setpriv', ['--inh-caps=-all', '--ambient-caps=-all', '--bounding-set=-all', '--', ...argv]]
}

let base: string
let results: Record<string, { read: Outcome; open: Outcome }>
const stores: Record<'copy' | 'copyWithWal' | 'walWithoutIndex' | 'writableFolder' | 'writableFile', string> = {
  copy: '',
  copyWithWal: '',
  walWithoutIndex: '',
  writableFolder: '',
  writableFile: '',
}

function append(session: Session, count: number): void {
  for (let index = 0; index < count; index++)
    session.append(
      'user/message',
      { message: createUserMessage(`message ${session.length}`, `m${session.length}`) },
      'append',
    )
}

/**
 * A folder under `base` holding copies of the database `source` and its files with `suffixes`,
 * read-only unless `writable` says which (of the folder and the files) anyone may write.
 */
function readOnlyCopy(
  name: string,
  source: string,
  suffixes: string[],
  writable: { folder?: boolean; files?: boolean } = {},
): string {
  const folder = join(base, name)
  mkdirSync(folder)
  // `cp` in another process: closing a descriptor of a database file in this one would drop the
  // locks SQLite's connections here hold on it.
  for (const suffix of suffixes) execFileSync('cp', [source + suffix, join(folder, `sessions.db${suffix}`)])
  for (const suffix of suffixes) chmodSync(join(folder, `sessions.db${suffix}`), writable.files ? 0o666 : 0o444)
  chmodSync(folder, writable.folder ? 0o777 : 0o555)
  return join(folder, 'sessions.db')
}

beforeAll(async () => {
  base = mkdtempSync(join(tmpdir(), 'warmfold-sqlite-read-only-'))
  chmodSync(base, 0o755)
  const source = join(base, 'source', 'sessions.db')
  const backend = new SqliteSessionBackend({ path: source })
  const session = await backend.create('s', {})
  append(session, 3)
  await backend.flush(session)
  // Everything in the database file itself, as a copy of a closed database has it.
  const checkpoint = new Database(source)
  checkpoint.exec('PRAGMA wal_checkpoint(TRUNCATE)')
  checkpoint.close()
  stores.copy = readOnlyCopy('copy', source, [''])
  stores.writableFolder = readOnlyCopy('writable-folder', source, [''], { folder: true })
  stores.writableFile = readOnlyCopy('writable-file', source, [''], { files: true })
  // Two more events committed in the WAL only, and the writer row dropped: a copy taken after the
  // host released the session, while another connection kept the WAL from being checkpointed.
  append(session, 2)
  const keeper = new Database(source)
  keeper.prepare('SELECT count(*) FROM events').raw().get()
  backend.releaseSync(session)
  stores.copyWithWal = readOnlyCopy('copy-with-wal', source, ['', '-wal', '-shm'])
  stores.walWithoutIndex = readOnlyCopy('wal-without-index', source, ['', '-wal'])
  keeper.close()
  const [command, args] = unprivileged([process.execPath, '--import', 'tsx', READER, ...Object.values(stores)])
  const output = execFileSync(command, args, { cwd: ROOT, encoding: 'utf8' })
  results = JSON.parse(output) as typeof results
}, 60_000)

afterAll(() => {
  // Folders made read-only must be writable again to be removed (by a user who is not root).
  for (const path of Object.values(stores)) if (path !== '') chmodSync(join(path, '..'), 0o755)
  rmSync(base, { recursive: true, force: true })
})

const readOnly = (path: string) => `the SQLite session store ${path} is read-only for this process: `

describe('SQLite store on a database this process cannot write', () => {
  it('read works on a read-only copy in a read-only folder (no -wal or -shm, which SQLite cannot create there)', () => {
    expect(results[stores.copy]?.read).toEqual({ ok: [0, 1, 2] })
  })

  it('read works on a read-only copy taken with its -wal and -shm, and sees the transactions in the WAL', () => {
    expect(results[stores.copyWithWal]?.read).toEqual({ ok: [0, 1, 2, 3, 4] })
  })

  it('read works on a read-only file in a folder it can write (SQLite makes the -shm index there)', () => {
    expect(results[stores.writableFolder]?.read).toEqual({ ok: [0, 1, 2] })
  })

  it('read works on a writable file in a read-only folder', () => {
    expect(results[stores.writableFile]?.read).toEqual({ ok: [0, 1, 2] })
  })

  it('read of a -wal whose index cannot be made fails with IO saying so, never leaving its transactions out', () => {
    const read = results[stores.walWithoutIndex]?.read
    expect(read).toMatchObject({ code: 'IO' })
    expect((read as { message: string }).message).toMatch(
      new RegExp(
        `^cannot read the SQLite session store ${stores.walWithoutIndex}: its write-ahead log ${stores.walWithoutIndex}-wal holds \\d+ bytes of transactions, but SQLite cannot create the index`,
      ),
    )
  })

  it('open for writing fails with IO naming the path and that it is read-only, and why', () => {
    const outcomes = Object.values(stores).map((path) => results[path]?.open)
    const why = (path: string) =>
      path === stores.writableFile
        ? `its folder ${join(path, '..')} cannot be written (EACCES), and SQLite must create ${path}-wal there to write`
        : 'the file cannot be written (EACCES)'
    expect(outcomes).toEqual(
      Object.values(stores).map((path) => ({
        code: 'IO',
        message: `${readOnly(path)}${why(path)}. It cannot be opened for writing (nothing was changed); its sessions can still be read (ctx.sessions.read, warmfold report --store sqlite:PATH)`,
      })),
    )
  })
})
