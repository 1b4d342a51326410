import type { AgentSpec } from './run-agent.ts'
import type { RequestKind } from './scripted-agent-server.ts'
import { FINAL_TEXT, LOG_FILES, SUMMARY_TEXT, TASK_PROMPT, toolTurn, writeTask } from './task.ts'

/** Claude Code's auto-compaction window and threshold in these runs (env overrides). */
export const CLAUDE_COMPACT_WINDOW = 100_000
export const CLAUDE_COMPACT_PCT = 30

/** The marker of Claude Code's summary instruction (a text block appended to the last user message). */
export const CLAUDE_SUMMARY_MARKER = 'create a detailed summary of the conversation so far'

/** Claude Code's request kinds: the summary request carries the summary instruction; tool-less others are side calls. */
export function claudeKind(body: Record<string, unknown>): RequestKind {
  const messages = Array.isArray(body.messages) ? (body.messages as unknown[]) : []
  if (JSON.stringify(messages.at(-1) ?? '').includes(CLAUDE_SUMMARY_MARKER)) return 'summary'
  return Array.isArray(body.tools) && body.tools.length > 0 ? 'conversation' : 'side'
}

/** Claude Code (`claude -p`, Anthropic Messages at ANTHROPIC_BASE_URL), Bash allowed. */
export const claudeCode: AgentSpec = {
  name: 'claude-code',
  pkg: '@anthropic-ai/claude-code',
  version: '2.1.332',
  bin: 'claude',
  script: {
    api: 'anthropic-messages',
    classify: (request) => claudeKind(request.json as Record<string, unknown>),
    plan: LOG_FILES.map((path, index) =>
      toolTurn({
        id: `toolu_${index + 1}`,
        name: 'Bash',
        args: { command: `cat ${path}`, description: `Read ${path}` },
      }),
    ),
    summary: () => `<summary>\n${SUMMARY_TEXT}\n</summary>`,
    side: () => ({ kind: 'text', text: 'ok' }),
    finalText: FINAL_TEXT,
  },
  prepare({ workspace, baseUrl }) {
    writeTask(workspace, 12_000)
    return {
      args: ['-p', '--allowedTools', 'Bash', '--output-format', 'text', TASK_PROMPT],
      env: {
        ANTHROPIC_BASE_URL: baseUrl,
        ANTHROPIC_API_KEY: 'sk-ant-scripted',
        CLAUDE_CODE_AUTO_COMPACT_WINDOW: String(CLAUDE_COMPACT_WINDOW),
        CLAUDE_AUTOCOMPACT_PCT_OVERRIDE: String(CLAUDE_COMPACT_PCT),
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        DISABLE_AUTOUPDATER: '1',
        DISABLE_TELEMETRY: '1',
        DISABLE_ERROR_REPORTING: '1',
      },
    }
  },
}
