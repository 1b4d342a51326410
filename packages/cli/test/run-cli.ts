import { runCli } from '../src/index.ts'

/** What one `warmfold` invocation printed, as a test sees it: the exit code, stdout, and stderr one line per message. */
export interface CliOutput {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** Runs the CLI in process with `argv` and captures what it prints. */
export async function cli(argv: string[]): Promise<CliOutput> {
  let stdout = ''
  let stderr = ''
  const code = await runCli(argv, {
    stdout: (text) => void (stdout += text),
    stderr: (text) => void (stderr += `${text}\n`),
  })
  return { code, stdout, stderr }
}
