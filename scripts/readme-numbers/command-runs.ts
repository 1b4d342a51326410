import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { BenchReport, CommandIo } from '@warmfold/cli'
import { parseBenchArgs, runBench, runCli } from '@warmfold/cli'
import { formatDuration } from '../build-packages.ts'

/** What one command line printed on stdout, and for `warmfold bench` its report (the `--json` document). */
export interface CommandOutput {
  readonly stdout: string
  readonly report?: BenchReport
}

/** Runs `warmfold …` command lines in this process, each once however often it is asked for. */
export class CommandRuns {
  readonly #cache = new Map<string, Promise<CommandOutput>>()
  readonly #started = Date.now()
  #count = 0
  #queue: Promise<unknown> = Promise.resolve()

  /** `log` gets a line as each command starts and ends (on stderr in `pnpm readme-numbers`). */
  constructor(private readonly log: (line: string) => void = () => {}) {}

  /**
   * What `line` prints: one `warmfold …` command, or several joined by `&&` (the output is the
   * last one's). They run in a fresh temporary folder, so `--keep-sessions .` and a report of a
   * kept log by its file name work; it is removed afterwards.
   * @throws Error naming the command and what it printed on stderr when one exits with a code other than 0.
   */
  output(line: string): Promise<CommandOutput> {
    const key = normalize(line)
    let output = this.#cache.get(key)
    if (!output) {
      // One at a time: each runs in its own working folder, and the runs are CPU-bound anyway.
      output = this.#queue.then(() => this.#run(key))
      this.#queue = output.then(
        () => undefined,
        () => undefined,
      )
      this.#cache.set(key, output)
    }
    return output
  }

  /** The report of `warmfold bench ARGS` (without `--json`: the same run serves a block of its table). */
  async bench(args: string): Promise<BenchReport> {
    const output = await this.output(`warmfold bench ${args}`)
    if (!output.report) throw new Error(`warmfold bench ${args} gave no report`)
    return output.report
  }

  async #run(line: string): Promise<CommandOutput> {
    const commands = line.split(' && ')
    const folder = await mkdtemp(join(tmpdir(), 'warmfold-readme-numbers-'))
    const back = process.cwd()
    const number = ++this.#count
    const begun = Date.now()
    this.log(`  [${number}] ${line}`)
    process.chdir(folder)
    try {
      let output: CommandOutput = { stdout: '' }
      for (const command of commands) output = await runOne(command)
      this.log(
        `  [${number}] done in ${formatDuration(Date.now() - begun)} (${formatDuration(Date.now() - this.#started)} in all)`,
      )
      return output
    } finally {
      process.chdir(back)
      await rm(folder, { recursive: true, force: true })
    }
  }
}

/** One `warmfold …` command, in process. */
async function runOne(command: string): Promise<CommandOutput> {
  const [program, ...argv] = command.split(' ')
  if (program !== 'warmfold') throw new Error(`${JSON.stringify(command)}: only warmfold commands are run`)
  let stdout = ''
  let stderr = ''
  const io: CommandIo = {
    stdout: (text) => void (stdout += text),
    stderr: (text) => void (stderr += `${text}\n`),
  }
  const fail = (code: number) =>
    new Error(`${command} exited with code ${code}:\n${stderr.split('\n').slice(-20).join('\n')}`)
  if (argv[0] === 'bench' && !argv.includes('--help')) {
    const { code, report } = await runBench(parseBenchArgs(argv.slice(1)), io)
    if (code !== 0) throw fail(code)
    return { stdout, report }
  }
  const code = await runCli(argv, io)
  if (code !== 0) throw fail(code)
  return { stdout }
}

/** `line` with its words separated by one space, the key two spellings of one command share. */
function normalize(line: string): string {
  return line.trim().split(/\s+/).join(' ')
}
