import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { homedir, tmpdir } from 'node:os'
import { join } from 'node:path'
import { startOutboundGuard } from './outbound-guard.ts'
import type { AgentScript, ClassifiedRequest } from './scripted-agent-server.ts'
import { startScriptedAgentServer } from './scripted-agent-server.ts'

/** Where agent CLIs are installed: one npm prefix per `<name>@<version>`, outside any workspace. */
export const AGENT_CACHE = process.env.WARMFOLD_AGENT_CACHE ?? join(homedir(), '.cache', 'warmfold-agents')

/** The folders and address one run gets. */
export interface AgentSetup {
  /** A fresh, empty HOME for the agent (its settings files go here). */
  readonly home: string
  /** The task's working directory, with the task's files. */
  readonly workspace: string
  /** The origin (`http://127.0.0.1:<port>`) the agent must send its model requests to. */
  readonly baseUrl: string
}

/** How to run one agent CLI against a scripted upstream. */
export interface AgentSpec {
  /** Short name, used in the install folder: `qwen-code`, `codex`, `gemini-cli`, `claude-code`. */
  readonly name: string
  /** The fixture folder's name before `-<version>`, and the test file's after `agents-` (default: `name`). */
  readonly fixtureName?: string
  /** npm package and the exact version. */
  readonly pkg: string
  readonly version: string
  /** The executable's name in `node_modules/.bin`. */
  readonly bin: string
  /** The scripted model. */
  readonly script: AgentScript
  /** Writes the task files and settings; returns the CLI's arguments and extra environment. */
  prepare(setup: AgentSetup): { readonly args: readonly string[]; readonly env: Readonly<Record<string, string>> }
}

/** What one run did. */
export interface AgentRun {
  readonly exitCode: number | null
  readonly signal: NodeJS.Signals | null
  readonly timedOut: boolean
  readonly stdout: string
  readonly stderr: string
  readonly durationMs: number
  /** When the first and the last model request arrived, in ms after the start (startup and shutdown cost). */
  readonly firstRequestMs: number | undefined
  readonly lastRequestMs: number | undefined
  /** Every request the scripted upstream received, in order, with its kind. */
  readonly requests: readonly ClassifiedRequest[]
  /** The command line, for READMEs and failure messages (HOME and workspace as placeholders). */
  readonly command: string
  /** Hosts the agent tried to reach through the refusing forward proxy ({@link startOutboundGuard}). */
  readonly outbound: readonly string[]
}

/** Options of {@link runAgent}. */
export interface RunAgentOptions {
  /** Kill the agent's process tree after this long (default 240 s). */
  readonly timeoutMs?: number
  /**
   * The base URL the agent is pointed at, given the scripted upstream's origin. Default: the upstream
   * itself (a direct run). A proxy test returns the proxy's origin here after starting it with
   * `upstreamOrigin` as its upstream.
   */
  readonly baseUrl?: (upstreamOrigin: string) => string | Promise<string>
  /** Keep the temp HOME and workspace (for debugging). */
  readonly keep?: boolean
}

/**
 * The path of `spec`'s executable, installing `pkg@version` into {@link AGENT_CACHE} first when it
 * is missing (`npm install --prefix`, no audit, no fund).
 * @throws Error with npm's output when the install fails.
 */
export function installAgent(spec: AgentSpec): string {
  const prefix = join(AGENT_CACHE, `${spec.name}@${spec.version}`)
  const bin = join(prefix, 'node_modules', '.bin', spec.bin)
  if (existsSync(bin)) return bin
  mkdirSync(prefix, { recursive: true })
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
  const args = ['install', '--prefix', prefix, '--no-audit', '--no-fund', `${spec.pkg}@${spec.version}`]
  const result = spawnSync(npm, args, { encoding: 'utf8', timeout: 600_000 })
  if (result.status !== 0 || !existsSync(bin))
    throw new Error(`npm ${args.join(' ')} failed (status ${result.status}): ${result.stderr.slice(-2000)}`)
  return bin
}

/**
 * Runs `spec`'s CLI once on its task: a scripted upstream on 127.0.0.1, a temp HOME and workspace,
 * proxy variables that refuse every other host, then the whole process tree killed (it runs in its
 * own process group).
 */
export async function runAgent(spec: AgentSpec, options: RunAgentOptions = {}): Promise<AgentRun> {
  const bin = installAgent(spec)
  const server = await startScriptedAgentServer(spec.script)
  const guard = await startOutboundGuard()
  const root = mkdtempSync(join(tmpdir(), `warmfold-${spec.name}-`))
  const home = join(root, 'home')
  const workspace = join(root, 'workspace')
  mkdirSync(home, { recursive: true })
  mkdirSync(workspace, { recursive: true })
  try {
    const baseUrl = options.baseUrl ? await options.baseUrl(server.origin) : server.origin
    const { args, env } = spec.prepare({ home, workspace, baseUrl })
    const started = Date.now()
    const outcome = await spawnTree(bin, args, {
      cwd: workspace,
      env: agentEnv(home, { ...guard.env, ...env }),
      timeoutMs: options.timeoutMs ?? 240_000,
    })
    const command = [spec.bin, ...args.map((arg) => JSON.stringify(arg))].join(' ')
    const arrivals = server.requests.map((entry) => entry.request.receivedAt - started)
    return {
      ...outcome,
      durationMs: Date.now() - started,
      firstRequestMs: arrivals[0],
      lastRequestMs: arrivals.at(-1),
      requests: [...server.requests],
      command: command.replaceAll(workspace, '$WORKSPACE').replaceAll(home, '$HOME'),
      outbound: [...guard.attempts],
    }
  } finally {
    await guard.close()
    await server.close()
    if (!options.keep) rmSync(root, { recursive: true, force: true })
  }
}

/** The agent's environment: PATH and locale from ours, a fresh HOME, no proxies, no CI noise. */
function agentEnv(home: string, extra: Readonly<Record<string, string>>): NodeJS.ProcessEnv {
  const keep = ['PATH', 'LANG', 'LC_ALL', 'TERM', 'SHELL', 'USER', 'TMPDIR']
  const env: NodeJS.ProcessEnv = {}
  for (const name of keep) if (process.env[name] !== undefined) env[name] = process.env[name]
  return { ...env, HOME: home, XDG_CONFIG_HOME: join(home, '.config'), NO_COLOR: '1', CI: '1', ...extra }
}

interface SpawnOutcome {
  readonly exitCode: number | null
  readonly signal: NodeJS.Signals | null
  readonly timedOut: boolean
  readonly stdout: string
  readonly stderr: string
}

function spawnTree(
  bin: string,
  args: readonly string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number },
): Promise<SpawnOutcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, {
      cwd: options.cwd,
      env: options.env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    let timedOut = false
    child.stdout.on('data', (part: Buffer) => (stdout += part.toString('utf8')))
    child.stderr.on('data', (part: Buffer) => (stderr += part.toString('utf8')))
    const killTree = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL')
      } catch {
        // the group is already gone
      }
    }
    const timer = setTimeout(() => {
      timedOut = true
      killTree()
    }, options.timeoutMs)
    child.on('error', (error) => {
      clearTimeout(timer)
      reject(new Error(`could not start ${bin}: ${error.message}`))
    })
    child.on('close', (exitCode, signal) => {
      clearTimeout(timer)
      killTree()
      resolve({ exitCode, signal, timedOut, stdout, stderr })
    })
  })
}

/** Writes `files` (relative path → content) under `dir`. */
export function writeFiles(dir: string, files: Readonly<Record<string, string>>): void {
  for (const [path, content] of Object.entries(files)) {
    const full = join(dir, path)
    mkdirSync(join(full, '..'), { recursive: true })
    writeFileSync(full, content)
  }
}

/** One line about a run: its duration, when its first and last model requests came, what it tried to reach. */
export function describeRun(run: AgentRun): string {
  const hosts = run.outbound.length === 0 ? 'none' : [...new Set(run.outbound)].join(', ')
  const kinds = run.requests.map((entry) => entry.kind).join(' ')
  return (
    `${run.command.split(' ')[0]}: exit ${run.exitCode} after ${run.durationMs} ms (first model request at ` +
    `${run.firstRequestMs} ms, last at ${run.lastRequestMs} ms); requests: ${kinds}; outbound attempts refused: ${hosts}`
  )
}
