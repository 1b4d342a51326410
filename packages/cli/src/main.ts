#!/usr/bin/env node
import { runCli } from './run-cli.ts'

const code = await runCli(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(`${text}\n`),
})
process.exitCode = code
