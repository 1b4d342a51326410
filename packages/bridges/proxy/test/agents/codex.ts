import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { AgentSpec } from './run-agent.ts'
import type { RequestKind } from './scripted-agent-server.ts'
import { FINAL_TEXT, LOG_FILES, SUMMARY_TEXT, TASK_PROMPT, toolTurn, writeTask } from './task.ts'

/** Codex's window and auto-compaction limit in these runs (tokens). */
export const CODEX_CONTEXT_WINDOW = 60_000
export const CODEX_AUTO_COMPACT_LIMIT = 20_000

/** The marker of Codex's compaction prompt (the user message it appends to the history). */
export const CODEX_COMPACTION_MARKER = 'CONTEXT CHECKPOINT COMPACTION'

/** Codex's request kinds: its compaction request ends with the checkpoint prompt; other tool-less ones are side calls. */
export function codexKind(body: Record<string, unknown>): RequestKind {
  const input = Array.isArray(body.input) ? (body.input as unknown[]) : []
  const last = JSON.stringify(input.at(-1) ?? '')
  if (last.includes(CODEX_COMPACTION_MARKER)) return 'summary'
  return Array.isArray(body.tools) && body.tools.length > 0 ? 'conversation' : 'side'
}

/** The Codex shell tool in 0.171 (its argument is `cmd`). */
export const CODEX_SHELL_TOOL = 'exec_command'

/** Codex CLI (`codex exec`, OpenAI Responses) through a custom model provider, no sandbox, no approvals. */
export const codex: AgentSpec = {
  name: 'codex',
  pkg: '@openai/codex',
  version: '0.171.0',
  bin: 'codex',
  script: {
    api: 'openai-responses',
    classify: (request) => codexKind(request.json as Record<string, unknown>),
    plan: LOG_FILES.map((path, index) =>
      toolTurn({
        id: `call_${index + 1}`,
        name: CODEX_SHELL_TOOL,
        args: { cmd: `cat ${path}` },
      }),
    ),
    summary: () => SUMMARY_TEXT,
    side: () => ({ kind: 'text', text: 'ok' }),
    finalText: FINAL_TEXT,
  },
  prepare({ home, workspace, baseUrl }) {
    writeTask(workspace, 12_000)
    const config = [
      'model = "scripted-model"',
      'model_provider = "scripted"',
      `model_context_window = ${CODEX_CONTEXT_WINDOW}`,
      `model_auto_compact_token_limit = ${CODEX_AUTO_COMPACT_LIMIT}`,
      'approval_policy = "never"',
      'sandbox_mode = "danger-full-access"',
      'check_for_update_on_startup = false',
      '',
      '[analytics]',
      'enabled = false',
      '',
      '[model_providers.scripted]',
      'name = "scripted"',
      `base_url = "${baseUrl}/v1"`,
      'env_key = "SCRIPTED_API_KEY"',
      'wire_api = "responses"',
      'request_max_retries = 0',
      'stream_max_retries = 0',
      '',
    ]
    mkdirSync(join(home, '.codex'), { recursive: true })
    writeFileSync(join(home, '.codex', 'config.toml'), config.join('\n'))
    return {
      args: [
        'exec',
        '--skip-git-repo-check',
        '--dangerously-bypass-approvals-and-sandbox',
        '--color',
        'never',
        TASK_PROMPT,
      ],
      env: { CODEX_HOME: join(home, '.codex'), SCRIPTED_API_KEY: 'sk-scripted', RUST_LOG: 'warn' },
    }
  },
}
