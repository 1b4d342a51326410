import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { TEXT_ONLY_GUARD } from '../../src/index.ts'
import type { AgentSpec } from './run-agent.ts'
import type { RequestKind } from './scripted-agent-server.ts'
import { FINAL_TEXT, LOG_FILES, SUMMARY_TEXT, TASK_PROMPT, toolTurn, writeTask } from './task.ts'

/** opencode's model limits in these runs (tokens). */
export const OPENCODE_CONTEXT = 20_000
export const OPENCODE_OUTPUT = 4_096

/** The opening of opencode's compaction agent prompt (packages/opencode/src/agent/prompt/compaction.txt). */
export const OPENCODE_SUMMARIZER_MARKER = 'You are a context summarization agent.'

function systemText(body: Record<string, unknown>): string {
  const messages = Array.isArray(body.messages) ? (body.messages as Array<Record<string, unknown>>) : []
  return messages
    .filter((message) => message.role === 'system')
    .map((message) => JSON.stringify(message.content))
    .join('\n')
}

/**
 * opencode's request kinds: its summary request carries {@link OPENCODE_SUMMARIZER_MARKER} as the
 * system prompt and the history as one `<conversation>` transcript; rewritten by `warmfold proxy`,
 * the conversation's system prompt and tools, that prompt inside the final user message after
 * {@link TEXT_ONLY_GUARD}. Tool-less others (its title) are side calls.
 */
export function opencodeKind(body: Record<string, unknown>): RequestKind {
  if (systemText(body).includes(OPENCODE_SUMMARIZER_MARKER)) return 'summary'
  const messages = Array.isArray(body.messages) ? (body.messages as unknown[]) : []
  const last = JSON.stringify(messages.at(-1) ?? '')
  if (last.includes(TEXT_ONLY_GUARD) && last.includes(OPENCODE_SUMMARIZER_MARKER)) return 'summary'
  return Array.isArray(body.tools) && body.tools.length > 0 ? 'conversation' : 'side'
}

/**
 * opencode (`opencode run`, Chat Completions through a custom `@ai-sdk/openai-compatible` provider
 * in `opencode.json`), models.dev, default plugins, updates, sharing and LSP downloads off.
 */
export const opencode: AgentSpec = {
  name: 'opencode',
  pkg: 'opencode-ai',
  version: '1.18.33',
  bin: 'opencode',
  script: {
    api: 'openai-chat',
    classify: (request) => opencodeKind(request.json as Record<string, unknown>),
    plan: LOG_FILES.map((path, index) =>
      toolTurn({
        id: `call_${index + 1}`,
        name: 'bash',
        args: { command: `cat ${path}`, description: `Read ${path}` },
      }),
    ),
    summary: () => `## Goal\n${SUMMARY_TEXT}`,
    side: () => ({ kind: 'text', text: 'Fix the sum test' }),
    finalText: FINAL_TEXT,
  },
  prepare({ home, workspace, baseUrl }) {
    writeTask(workspace, 12_000)
    const config = {
      $schema: 'https://opencode.ai/config.json',
      autoupdate: false,
      share: 'disabled',
      model: 'scripted/scripted-model',
      small_model: 'scripted/scripted-model',
      permission: { bash: 'allow', edit: 'allow', read: 'allow' },
      provider: {
        scripted: {
          npm: '@ai-sdk/openai-compatible',
          name: 'scripted',
          options: { baseURL: `${baseUrl}/v1`, apiKey: 'sk-scripted' },
          models: {
            'scripted-model': {
              name: 'scripted-model',
              tool_call: true,
              limit: { context: OPENCODE_CONTEXT, output: OPENCODE_OUTPUT },
            },
          },
        },
      },
    }
    const dir = join(home, '.config', 'opencode')
    mkdirSync(dir, { recursive: true })
    writeFileSync(join(dir, 'opencode.json'), `${JSON.stringify(config, null, 2)}\n`)
    return {
      args: ['run', TASK_PROMPT],
      env: {
        OPENCODE_DISABLE_MODELS_FETCH: '1',
        OPENCODE_DISABLE_AUTOUPDATE: '1',
        OPENCODE_DISABLE_DEFAULT_PLUGINS: '1',
        OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
        OPENCODE_DISABLE_SHARE: '1',
        OPENCODE_DISABLE_CLAUDE_CODE: '1',
        OPENCODE_DISABLE_EXTERNAL_SKILLS: '1',
        OPENCODE_PURE: '1',
      },
    }
  },
}
