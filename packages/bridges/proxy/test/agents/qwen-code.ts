import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { TEXT_ONLY_GUARD } from '../../src/index.ts'
import type { AgentSpec } from './run-agent.ts'
import type { RequestKind } from './scripted-agent-server.ts'
import { FINAL_TEXT, LOG_FILES, SUMMARY_TEXT, TASK_PROMPT, toolTurn, writeTask } from './task.ts'

/** Qwen Code's model window in these runs (tokens): its compaction triggers at 22,000 (window − 33,000). */
export const QWEN_CONTEXT_WINDOW = 55_000

function systemText(body: Record<string, unknown>): string {
  const messages = Array.isArray(body.messages) ? (body.messages as Array<Record<string, unknown>>) : []
  const system = messages.find((message) => message.role === 'system')
  return system === undefined ? '' : JSON.stringify(system.content)
}

/** The sentence Qwen Code's cache-sharing compaction request adds before its directive. */
export const QWEN_CACHE_SHARING_MARKER = 'tool execution is disabled for this request'

/**
 * Qwen Code's request kinds. Two summary shapes: the cache-sharing request (main system prompt and
 * tools, the history, then a user message with the compression prompt and {@link QWEN_CACHE_SHARING_MARKER}),
 * and the dedicated summarizer (the `<state_snapshot>` compression prompt as system, no tools). A
 * tool-less request with another system prompt is a side call. Through `warmfold proxy` with warm
 * summaries on, the dedicated summarizer's request arrives rewritten: the conversation's system
 * and tools, the compression prompt inside the final user message after {@link TEXT_ONLY_GUARD}.
 */
export function qwenKind(body: Record<string, unknown>): RequestKind {
  const tools = Array.isArray(body.tools) ? body.tools.length : 0
  const messages = Array.isArray(body.messages) ? (body.messages as unknown[]) : []
  if (systemText(body).includes('state_snapshot')) return 'summary'
  const last = JSON.stringify(messages.at(-1) ?? '')
  if (last.includes(QWEN_CACHE_SHARING_MARKER)) return 'summary'
  if (last.includes(TEXT_ONLY_GUARD) && last.includes('state_snapshot')) return 'summary'
  return tools > 0 ? 'conversation' : 'side'
}

/**
 * Qwen Code (Chat Completions), headless (`-p`), yolo, in a 55k-token window with background memory
 * off. With `cacheSharing` (its default), its compaction first sends the cache-sharing request, which
 * the scripted model answers with a snapshot, so no other summary request follows; without it
 * (`model.generationConfig.enableCacheControl: false`), it sends the dedicated summarizer's (cold) request.
 */
export function qwenCodeSpec(cacheSharing: boolean): AgentSpec {
  return {
    ...qwenCode,
    fixtureName: cacheSharing ? 'qwen-code' : 'qwen-code-cold',
    prepare(setup) {
      const prepared = qwenCode.prepare(setup)
      if (!cacheSharing) {
        const path = join(setup.home, '.qwen', 'settings.json')
        const settings = JSON.parse(readFileSync(path, 'utf8')) as { model: { generationConfig: object } }
        settings.model.generationConfig = { ...settings.model.generationConfig, enableCacheControl: false }
        writeFileSync(path, `${JSON.stringify(settings, null, 2)}\n`)
      }
      return prepared
    },
  }
}

/** Qwen Code with its default settings (see {@link qwenCodeSpec}). */
export const qwenCode: AgentSpec = {
  name: 'qwen-code',
  pkg: '@qwen-code/qwen-code',
  version: '0.24.4',
  bin: 'qwen',
  script: {
    api: 'openai-chat',
    classify: (request) => qwenKind(request.json as Record<string, unknown>),
    plan: LOG_FILES.map((path, index) =>
      toolTurn({
        id: `call_${index + 1}`,
        name: 'run_shell_command',
        // The pause: under load, Qwen Code 0.24.4 sometimes reports "Output: (empty)" for a command that
        // exits at once (the history then grows less, and the compaction point moves).
        args: { command: `cat ${path} && sleep 0.3`, description: `Read ${path}` },
      }),
    ),
    summary: () => `<state_snapshot>\n${SUMMARY_TEXT}\n</state_snapshot>`,
    side: () => ({ kind: 'text', text: 'ok' }),
    finalText: FINAL_TEXT,
  },
  prepare({ home, workspace, baseUrl }) {
    writeTask(workspace, 12_000)
    const settings = {
      general: { enableAutoUpdate: false },
      privacy: { usageStatisticsEnabled: false },
      telemetry: { enabled: false },
      memory: { enableManagedAutoMemory: false, enableManagedAutoDream: false },
      ui: { enableFollowupSuggestions: false },
      model: { generationConfig: { contextWindowSize: QWEN_CONTEXT_WINDOW } },
    }
    mkdirSync(join(home, '.qwen'), { recursive: true })
    writeFileSync(join(home, '.qwen', 'settings.json'), `${JSON.stringify(settings, null, 2)}\n`)
    return {
      args: ['--yolo', '--auth-type', 'openai', '--output-format', 'text', '-p', TASK_PROMPT],
      env: {
        OPENAI_BASE_URL: `${baseUrl}/v1`,
        OPENAI_API_KEY: 'sk-scripted',
        OPENAI_MODEL: 'scripted-model',
        QWEN_CODE_SUPPRESS_YOLO_WARNING: '1',
        QWEN_TELEMETRY_ENABLED: 'false',
        QWEN_USAGE_STATISTICS_ENABLED: 'false',
      },
    }
  },
}
