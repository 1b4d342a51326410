import { execFileSync, spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** A PostgreSQL server started for the tests in a temporary data directory. */
export interface PostgresServer {
  /** `postgres://postgres@127.0.0.1:<port>/warmfold_test` */
  readonly url: string
  readonly directory: string
  stop(): Promise<void>
}

const INSTALL_HINT =
  'install the server (Debian/Ubuntu: `apt-get install -y postgresql`) or put its bin directory on PATH via pg_config'

/**
 * The directory of `initdb`, `postgres` and `psql`: `pg_config --bindir`, else the newest
 * `/usr/lib/postgresql/<n>/bin`.
 */
export function findPostgresBinaries(): string {
  const candidates: string[] = []
  try {
    candidates.push(
      execFileSync('pg_config', ['--bindir'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim(),
    )
  } catch {
    // no pg_config on PATH (it comes with libpq-dev or the server package); try the Debian layout
  }
  const debian = '/usr/lib/postgresql'
  if (existsSync(debian)) {
    const versions = readdirSync(debian)
      .filter((name) => /^\d+$/.test(name))
      .toSorted((a, b) => Number(b) - Number(a))
    candidates.push(...versions.map((version) => join(debian, version, 'bin')))
  }
  const found = candidates.find((dir) => existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'postgres')))
  if (!found) {
    throw new Error(
      `PostgreSQL server binaries (initdb, postgres) not found in ` +
        `${candidates.join(', ') || 'pg_config --bindir or /usr/lib/postgresql/*/bin'}: ${INSTALL_HINT}`,
    )
  }
  return found
}

/** A free TCP port on 127.0.0.1 (the kernel picks it; the server binds it right after). */
async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done))
  const port = (server.address() as { port: number }).port
  await new Promise((done) => server.close(done))
  return port
}

/**
 * The server refuses to run as root: then its programs run as the `postgres` OS user, set by
 * `spawn` itself (no `runuser` in between, so a signal reaches the server and not a wrapper).
 */
function asServerUser(): { uid?: number; gid?: number } {
  return process.getuid?.() === 0 ? { uid: postgresId('-u'), gid: postgresId('-g') } : {}
}

/** The `postgres` OS user's uid (`-u`) or gid (`-g`). */
function postgresId(flag: '-u' | '-g'): number {
  return Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim())
}

/** Runs initdb into a fresh temp directory, starts `postgres` on 127.0.0.1 and creates a database. */
export async function startPostgres(): Promise<PostgresServer> {
  const bin = findPostgresBinaries()
  const directory = mkdtempSync(join(tmpdir(), 'warmfold-pg-'))
  let child: ChildProcess | undefined
  const cleanup = async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((done) => child?.once('exit', done))
      child.kill('SIGINT') // fast shutdown: rolls back open transactions, no checkpoint wait for clients
      await exited
    }
    rmSync(directory, { recursive: true, force: true })
  }
  try {
    const data = join(directory, 'data')
    const user = asServerUser()
    if (user.uid !== undefined && user.gid !== undefined) chownSync(directory, user.uid, user.gid)
    chmodSync(directory, 0o700)
    execFileSync(
      join(bin, 'initdb'),
      ['-D', data, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8', '--locale=C'],
      { ...user, cwd: directory, stdio: ['ignore', 'ignore', 'pipe'] },
    )
    const port = await freePort()
    // fsync stays on: the tests check what a committed flush survives.
    child = spawn(
      join(bin, 'postgres'),
      ['-D', data, '-h', '127.0.0.1', '-p', String(port), '-k', directory, '-c', 'max_connections=60'],
      { ...user, cwd: directory, stdio: ['ignore', 'ignore', 'pipe'] },
    )
    let log = ''
    child.stderr?.on('data', (chunk: Buffer) => void (log += chunk.toString()))
    // The server's socket in `directory`, as the client programs reach it.
    const server = ['-h', directory, '-p', String(port)]
    await waitReady(join(bin, 'pg_isready'), server, child, () => log)
    const psql = [...server, '-U', 'postgres', '-d', 'postgres', '-v', 'ON_ERROR_STOP=1']
    execFileSync(join(bin, 'psql'), [...psql, '-c', 'CREATE DATABASE warmfold_test'], {
      cwd: directory,
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    return { url: `postgres://postgres@127.0.0.1:${port}/warmfold_test`, directory, stop: cleanup }
  } catch (error) {
    await cleanup()
    throw error
  }
}

/** Polls `pg_isready` until the server accepts connections; fails at once if the server exits. */
async function waitReady(isReady: string, server: string[], child: ChildProcess, log: () => string): Promise<void> {
  for (let attempt = 0; attempt < 600; attempt++) {
    if (child.exitCode !== null) throw new Error(`postgres exited with ${child.exitCode} during startup:\n${log()}`)
    try {
      execFileSync(isReady, [...server, '-q'], { stdio: 'ignore' })
      return
    } catch {
      await new Promise((done) => setTimeout(done, 50))
    }
  }
  throw new Error(`postgres did not accept connections within 30 s:\n${log()}`)
}
