import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { TEXT_ONLY_GUARD } from '../../src/index.ts'
import type { AgentSpec } from './run-agent.ts'
import type { RequestKind } from './scripted-agent-server.ts'
import { FINAL_TEXT, LOG_FILES, SUMMARY_TEXT, TASK_PROMPT, toolTurn, writeTask } from './task.ts'

/** pi's model window and compaction settings in these runs (tokens): it compacts above window − reserve = 10,000. */
export const PI_CONTEXT_WINDOW = 30_000
export const PI_RESERVE_TOKENS = 20_000
export const PI_KEEP_RECENT_TOKENS = 2_000

/** The opening of pi's summarizer system prompt (both its history and its turn-prefix summaries). */
export const PI_SUMMARIZER_MARKER = 'You are a context summarization assistant.'

/** The second prompt: pi compacts after the first (its threshold is checked when a prompt ends), then goes on. */
export const PI_SECOND_PROMPT = 'Say again what you changed.'

function systemText(body: Record<string, unknown>): string {
  const messages = Array.isArray(body.messages) ? (body.messages as Array<Record<string, unknown>>) : []
  const system = messages.find((message) => message.role === 'system' || message.role === 'developer')
  return system === undefined ? '' : JSON.stringify(system.content)
}

/**
 * pi's request kinds: its summary requests carry {@link PI_SUMMARIZER_MARKER} as the system prompt
 * and the history as one `<conversation>` transcript in a user message. Through `warmfold proxy`
 * with warm summaries on they arrive rewritten: the conversation's system prompt and tools, pi's
 * summarizer prompt inside the final user message after {@link TEXT_ONLY_GUARD}.
 */
export function piKind(body: Record<string, unknown>): RequestKind {
  if (systemText(body).includes(PI_SUMMARIZER_MARKER)) return 'summary'
  const messages = Array.isArray(body.messages) ? (body.messages as unknown[]) : []
  const last = JSON.stringify(messages.at(-1) ?? '')
  if (last.includes(TEXT_ONLY_GUARD) && last.includes(PI_SUMMARIZER_MARKER)) return 'summary'
  return Array.isArray(body.tools) && body.tools.length > 0 ? 'conversation' : 'side'
}

/**
 * pi (`pi -p`, Chat Completions through a custom provider in `~/.pi/agent/models.json`), offline,
 * no session file. Two prompts: pi checks its compaction threshold when a prompt ends, so it
 * compacts after the task's prompt and answers the second one from the compacted history.
 */
export const pi: AgentSpec = {
  name: 'pi',
  pkg: '@mariozechner/pi-coding-agent',
  version: '0.73.1',
  bin: 'pi',
  script: {
    api: 'openai-chat',
    classify: (request) => piKind(request.json as Record<string, unknown>),
    plan: LOG_FILES.map((path, index) =>
      toolTurn({ id: `call_${index + 1}`, name: 'bash', args: { command: `cat ${path}` } }),
    ),
    summary: () => `## Goal\n${SUMMARY_TEXT}`,
    side: () => ({ kind: 'text', text: 'ok' }),
    finalText: FINAL_TEXT,
  },
  prepare({ home, workspace, baseUrl }) {
    writeTask(workspace, 12_000)
    const models = {
      providers: {
        scripted: {
          baseUrl: `${baseUrl}/v1`,
          api: 'openai-completions',
          apiKey: 'sk-scripted',
          compat: { supportsDeveloperRole: false, supportsReasoningEffort: false },
          models: [{ id: 'scripted-model', contextWindow: PI_CONTEXT_WINDOW, maxTokens: 4_096, reasoning: false }],
        },
      },
    }
    const settings = {
      compaction: { enabled: true, reserveTokens: PI_RESERVE_TOKENS, keepRecentTokens: PI_KEEP_RECENT_TOKENS },
      retry: { enabled: false },
    }
    const dir = join(home, '.pi', 'agent')
    mkdirSync(dir, { recursive: true })
    writeFileSync(join(dir, 'models.json'), `${JSON.stringify(models, null, 2)}\n`)
    writeFileSync(join(dir, 'settings.json'), `${JSON.stringify(settings, null, 2)}\n`)
    return {
      args: [
        '--offline',
        '--no-session',
        '--provider',
        'scripted',
        '--model',
        'scripted-model',
        '-p',
        TASK_PROMPT,
        PI_SECOND_PROMPT,
      ],
      env: { PI_OFFLINE: '1', PI_TELEMETRY: '0', PI_SKIP_VERSION_CHECK: '1' },
    }
  },
}
