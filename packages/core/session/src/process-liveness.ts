import { readFileSync } from 'node:fs'
import { hostname } from 'node:os'

/** Who holds a lock: enough to tell, on the same host, whether that process still runs. */
export interface ProcessIdentity {
  readonly pid: number
  readonly hostname: string
  /** Linux boot id when the lock was taken; another boot means every owner is gone. */
  readonly boot?: string
  /** Start time of `pid` (clock ticks since boot, `/proc/<pid>/stat` field 22); tells a reused pid apart. */
  readonly start?: number
}

/** Whether the process named by an identity runs, and why we think so. */
export type Liveness =
  | { readonly alive: true; readonly reason: string }
  | { readonly alive: false; readonly reason: string }

let ownIdentity: ProcessIdentity | undefined

/** This process's identity (computed once: none of it changes while the process runs). */
export function currentProcess(): ProcessIdentity {
  ownIdentity ??= withOptional(
    { pid: process.pid, hostname: hostname() },
    readBootId(),
    readProcStat(process.pid)?.start,
  )
  return ownIdentity
}

/**
 * Whether the owner of a lock still runs. An owner on another host (or with an unreadable host)
 * counts as alive: nothing on this host can tell. On this host a process is gone when signal 0
 * finds no such pid, when `/proc` shows it as a zombie (exited, not yet reaped by its parent:
 * it will never write again), when the machine rebooted since, or when the pid now belongs to a
 * process that started at another time (pid reuse). Where `/proc` is unavailable only signal 0
 * decides.
 */
export function liveness(owner: ProcessIdentity): Liveness {
  const self = currentProcess()
  if (owner.hostname !== self.hostname)
    return { alive: true, reason: `it runs on host ${owner.hostname}, which cannot be checked from ${self.hostname}` }
  if (owner.boot !== undefined && self.boot !== undefined && owner.boot !== self.boot)
    return { alive: false, reason: 'the machine rebooted since it took the lock' }
  try {
    process.kill(owner.pid, 0)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM')
      return { alive: false, reason: `pid ${owner.pid} no longer runs` }
  }
  const stat = readProcStat(owner.pid)
  if (stat === undefined) return { alive: true, reason: `pid ${owner.pid} runs` }
  if (stat.state === 'Z' || stat.state === 'X')
    return { alive: false, reason: `pid ${owner.pid} has exited (a zombie its parent has not reaped)` }
  if (owner.start !== undefined && stat.start !== owner.start)
    return {
      alive: false,
      reason:
        `pid ${owner.pid} now belongs to another process (started at tick ${stat.start}, ` +
        `the owner at ${owner.start})`,
    }
  return { alive: true, reason: `pid ${owner.pid} runs` }
}

/** Reads a process's state letter and start time from `/proc/<pid>/stat`; `undefined` when not available. */
function readProcStat(pid: number): { state: string; start: number } | undefined {
  let text: string
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8')
  } catch {
    return undefined
  }
  // The command name (field 2) may hold spaces and parentheses; the fields after its last ')' do not.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ')
  const start = Number(fields[19])
  const state = fields[0]
  if (state === undefined || !Number.isInteger(start)) return undefined
  return { state, start }
}

function readBootId(): string | undefined {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || undefined
  } catch {
    return undefined
  }
}

function withOptional(identity: ProcessIdentity, boot: string | undefined, start: number | undefined): ProcessIdentity {
  return { ...identity, ...(boot === undefined ? {} : { boot }), ...(start === undefined ? {} : { start }) }
}
