import { runBench } from './bench/bench-command.ts'
import type { CommandIo } from './shared/command-io.ts'
import { CLI_PACKAGE_NAME, cliVersion } from './cli-version.ts'
import { runDoctor } from './doctor/doctor-command.ts'
import { DOCTOR_USAGE, parseDoctorArgs } from './doctor/parse-doctor-args.ts'
import { BENCH_USAGE, parseBenchArgs } from './bench/parse-bench-args.ts'
import { parseProxyArgs, PROXY_USAGE } from './proxy/parse-proxy-args.ts'
import { runProxy } from './proxy/proxy-command.ts'
import { parseReportArgs, REPORT_USAGE } from './report/parse-report-args.ts'
import { runReport } from './report/report-command.ts'
import { printable } from './shared/printable-text.ts'
import { RunError } from './shared/run-error.ts'
import { UsageError } from './shared/usage-error.ts'

export const USAGE = `Usage: warmfold <command> [options]

Commands:
  bench          compare the prefix-cache economics of compaction strategies (warmfold bench --help)
  doctor         find every prefix-cache break in an agent's request log (warmfold doctor --help)
  proxy          at an agent's base URL: explain cache breaks live, warm its summary calls (warmfold proxy --help)
  report         show every request's cache use and every cache break of a session log (warmfold report --help)

Options:
  -v, --version  print the version of ${CLI_PACKAGE_NAME}
  -h, --help     show this help`

/**
 * Runs the `warmfold` command line and returns the exit code: 0 ok, 1 a run failed, 2 bad
 * flags. `env` is where `--probe-key-env` is looked up. Expected failures (bad flags, a failed
 * endpoint, an unwritable `--out`) print one message; only an unexpected error prints a stack.
 */
export async function runCli(
  argv: readonly string[],
  io: CommandIo,
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  const [command, ...rest] = argv
  try {
    if (command === undefined || command === '-h' || command === '--help') {
      io.stdout(`${USAGE}\n`)
      return command === undefined ? 2 : 0
    }
    if (command === '-v' || command === '--version') {
      if (rest.length)
        throw new UsageError(`${command} takes no arguments, got ${rest.map((item) => JSON.stringify(item)).join(' ')}`)
      io.stdout(`${cliVersion()}\n`)
      return 0
    }
    if (command === 'doctor')
      return await helpOr(parseDoctorArgs(rest), DOCTOR_USAGE, io, async (args) => (await runDoctor(args, io)).code)
    if (command === 'proxy')
      return await helpOr(parseProxyArgs(rest, env), PROXY_USAGE, io, (args) => runProxy(args, io))
    if (command === 'report')
      return await helpOr(parseReportArgs(rest), REPORT_USAGE, io, (args) => runReport(args, io).then(() => 0))
    if (command !== 'bench')
      throw new UsageError(
        `unknown command ${JSON.stringify(command)}; commands: bench, doctor, proxy, report (or --version, --help)`,
      )
    return await helpOr(parseBenchArgs(rest, env), BENCH_USAGE, io, async (args) => (await runBench(args, io)).code)
  } catch (error) {
    // Messages may quote a log or a flag's value: never let one send control characters to the terminal.
    if (error instanceof UsageError || error instanceof RunError) {
      io.stderr(`warmfold: ${printable(error.message)}`)
      return error instanceof UsageError ? 2 : 1
    }
    io.stderr(`warmfold: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`)
    return 1
  }
}

/** The command's usage when its arguments ask for `--help` (exit code 0), else its exit code. */
async function helpOr<Args extends { readonly help: boolean }>(
  args: Args,
  usage: string,
  io: CommandIo,
  run: (args: Args) => Promise<number>,
): Promise<number> {
  if (!args.help) return run(args)
  io.stdout(`${usage}\n`)
  return 0
}
