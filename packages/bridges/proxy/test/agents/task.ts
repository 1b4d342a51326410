import { writeFiles } from './run-agent.ts'
import type { ScriptedCall, ScriptedTurn } from './wire-replies.ts'

/**
 * The task every agent runs: a failing test in a small project whose build logs are large, so
 * each `cat` of a log adds thousands of tokens to the history and the agent reaches its compaction
 * after a few steps. The model is scripted; the task only has to look real to the agent.
 */
export const TASK_PROMPT =
  'The test in test/sum.test.js fails. Read the build logs in logs/ with cat to find out why, fix src/sum.js, ' +
  'and say DONE when the test passes.'

/** The scripted model's last answer; a run finished its task when the agent printed it. */
export const FINAL_TEXT = 'WARMFOLD-TASK-DONE: src/sum.js now adds instead of subtracting; the test passes.'

/** The scripted summary (the agent's compaction gets this back as the summary of its history). */
export const SUMMARY_TEXT =
  'Summary: the user asked to fix the failing test in test/sum.test.js. The build logs in logs/ were read; ' +
  'they show `sum(2, 3)` returning -1. Next step: fix src/sum.js.'

/** Log files the scripted model `cat`s, in order. */
export const LOG_FILES = ['logs/build-1.log', 'logs/build-2.log', 'logs/build-3.log', 'logs/build-4.log'] as const

/** A deterministic build log of about `chars` characters. */
export function buildLog(seed: number, chars: number): string {
  const lines: string[] = []
  let length = 0
  for (let step = 0; length < chars; step++) {
    const line =
      `2026-12-04T10:${String(step % 60).padStart(2, '0')}:00Z build[${seed}] step ${step}: ` +
      `compiled src/module-${(step * 7 + seed) % 97}.js (${(step * 131 + seed * 17) % 9000} bytes) ok`
    lines.push(line)
    length += line.length + 1
  }
  lines.push(`build[${seed}] test/sum.test.js: expected sum(2, 3) to be 5, got -1`)
  return `${lines.join('\n')}\n`
}

/** Writes the task's project into `workspace`, with logs of `logChars` characters each. */
export function writeTask(workspace: string, logChars: number): void {
  const files: Record<string, string> = {
    'package.json': '{ "name": "sum-task", "type": "module", "scripts": { "test": "node test/sum.test.js" } }\n',
    'src/sum.js': 'export function sum(a, b) {\n  return a - b\n}\n',
    'test/sum.test.js':
      "import { sum } from '../src/sum.js'\nif (sum(2, 3) !== 5) throw new Error('sum(2, 3) should be 5')\n",
  }
  LOG_FILES.forEach((path, index) => (files[path] = buildLog(index + 1, logChars)))
  writeFiles(workspace, files)
}

/** A model turn that makes one tool call. */
export function toolTurn(call: ScriptedCall): ScriptedTurn {
  return { kind: 'tools', calls: [call] }
}
