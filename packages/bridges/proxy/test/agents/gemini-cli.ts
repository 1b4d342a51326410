import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { TEXT_ONLY_GUARD } from '../../src/index.ts'
import type { AgentSpec } from './run-agent.ts'
import type { RequestKind } from './scripted-agent-server.ts'
import { FINAL_TEXT, LOG_FILES, SUMMARY_TEXT, TASK_PROMPT, toolTurn, writeTask } from './task.ts'

/**
 * Gemini CLI's compression threshold in these runs: a fraction of the model's token limit (1,048,576
 * for every model), so 0.015 compresses once the last prompt reached about 15,700 tokens.
 */
export const GEMINI_COMPRESSION_THRESHOLD = 0.015

/** The model the CLI is told to use (a known name, so its model configs apply). */
export const GEMINI_MODEL = 'gemini-2.5-flash'

function systemText(body: Record<string, unknown>): string {
  return JSON.stringify(body.systemInstruction ?? body.system_instruction ?? '')
}

/**
 * Gemini CLI's request kinds: its compression call and the verification call after it both carry the
 * `<state_snapshot>` system prompt and no tools; other tool-less requests are side calls. Through
 * `warmfold proxy` with warm summaries on, both arrive rewritten: the conversation's system and
 * tools, the compression prompt (or the verification's) in the last content after {@link TEXT_ONLY_GUARD}.
 */
export function geminiKind(body: Record<string, unknown>): RequestKind {
  if (systemText(body).includes('state_snapshot')) return 'summary'
  const contents = Array.isArray(body.contents) ? (body.contents as unknown[]) : []
  const last = JSON.stringify(contents.at(-1) ?? '')
  if (last.includes(TEXT_ONLY_GUARD) && last.includes('state_snapshot')) return 'summary'
  return Array.isArray(body.tools) && body.tools.length > 0 ? 'conversation' : 'side'
}

/** The scripted model's text turn in the middle of the task. */
export const MID_TASK_TEXT = 'Two logs read; the failure is in sum. I will read the remaining logs next.'

const catTurns = LOG_FILES.map((path, index) =>
  toolTurn({ id: `call_${index + 1}`, name: 'run_shell_command', args: { command: `cat ${path}` } }),
)

/**
 * The answer to the CLI's next-speaker check (its only side call here): `model` right after the
 * mid-task text, so the CLI says "Please continue.", else `user` (the task is done).
 */
export function nextSpeaker(body: Record<string, unknown>): string {
  const contents = Array.isArray(body.contents) ? (body.contents as unknown[]) : []
  const speaker = JSON.stringify(contents.at(-2) ?? '').includes(MID_TASK_TEXT) ? 'model' : 'user'
  return JSON.stringify({ reasoning: `The last turn asks for ${speaker}.`, next_speaker: speaker })
}

/** Gemini CLI (`gemini -p`, API-key auth, Gemini API at GOOGLE_GEMINI_BASE_URL), yolo. */
export const geminiCli: AgentSpec = {
  name: 'gemini-cli',
  pkg: '@google/gemini-cli',
  version: '0.61.0',
  bin: 'gemini',
  script: {
    api: 'gemini',
    classify: (request) => geminiKind(request.json as Record<string, unknown>),
    // Gemini CLI compresses only at a user message that is not a tool result: a text turn mid-task makes
    // its next-speaker check answer "model", and the CLI's "Please continue." is that message.
    plan: [...catTurns.slice(0, 2), { kind: 'text', text: MID_TASK_TEXT }, ...catTurns.slice(2)],
    summary: () => `<state_snapshot>\n${SUMMARY_TEXT}\n</state_snapshot>`,
    side: (request) => ({ kind: 'text', text: nextSpeaker(request.json as Record<string, unknown>) }),
    finalText: FINAL_TEXT,
  },
  prepare({ home, workspace, baseUrl }) {
    writeTask(workspace, 12_000)
    const settings = {
      general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
      privacy: { usageStatisticsEnabled: false },
      telemetry: { enabled: false },
      security: { auth: { selectedType: 'gemini-api-key' }, folderTrust: { enabled: false } },
      model: { name: GEMINI_MODEL, compressionThreshold: GEMINI_COMPRESSION_THRESHOLD, skipNextSpeakerCheck: false },
    }
    mkdirSync(join(home, '.gemini'), { recursive: true })
    writeFileSync(join(home, '.gemini', 'settings.json'), `${JSON.stringify(settings, null, 2)}\n`)
    return {
      args: ['--yolo', '--skip-trust', '--output-format', 'text', '-m', GEMINI_MODEL, '-p', TASK_PROMPT],
      env: {
        GOOGLE_GEMINI_BASE_URL: baseUrl,
        GEMINI_API_KEY: 'scripted-key',
        GEMINI_CLI_NO_RELAUNCH: 'true',
        GEMINI_TELEMETRY_ENABLED: 'false',
      },
    }
  },
}
