import Anthropic from '@anthropic-ai/sdk'
import { GoogleGenAI, ThinkingLevel } from '@google/genai'
import OpenAI from 'openai'
import type { RequestApi } from '../../src/index.ts'

/**
 * A short coding session, told once and sent through each API's official SDK, so `warmfold
 * doctor` is tested on the bodies real clients produce. The prompts are this project's own.
 */
type Step =
  | { kind: 'user'; text: string }
  | { kind: 'call'; id: string; name: string; args: Record<string, unknown> }
  | { kind: 'result'; id: string; name: string; text: string }

/** How one request of the session is sent. */
interface SendOptions {
  tools: boolean
  system: string
  effort: 'high' | 'low'
  /** Output budget: summary calls ask for more (never prompt-shaping). */
  maxTokens: number
  /** Per-request noise to add where the API has it: stream flags, replayed item ids, user ids. */
  noise: boolean
}

type Send = (history: readonly Step[], options: SendOptions) => Promise<unknown>

const SYSTEM =
  'You are Tinker, a careful assistant in the repository of kettle-timer, a small TypeScript library. Read a file before you change it and run the tests after every edit.'
const SUMMARIZER = 'You turn coding sessions into short hand-over notes for the next engineer.'
const TOOLS = [
  {
    name: 'read_file',
    description: 'Return the text of one file of the repository.',
    properties: { path: { type: 'string', description: 'path from the repository root' } },
    required: ['path'],
  },
  {
    name: 'run_tests',
    description: 'Run the test suite, optionally only the tests whose name matches a filter.',
    properties: { filter: { type: 'string', description: 'substring of test names' } },
    required: [],
  },
]
const KETTLE = Array.from(
  { length: 40 },
  (_, line) => `export const step${line} = (ms: number) => Math.ceil(ms / 1000) + ${line} // rounding step ${line}`,
).join('\n')
const TESTS = Array.from({ length: 25 }, (_, line) => `✓ timer ${line} fires after its delay (${line + 3} ms)`).join(
  '\n',
)
const CLOCK = Array.from(
  { length: 20 },
  (_, line) => `export function tick${line}(now: number): number { return now + ${line} }`,
).join('\n')
/** The first tool result as a pruner shortens it: head, marker, tail. */
const KETTLE_PRUNED = `${KETTLE.slice(0, 200)}\n[… ${KETTLE.length - 300} characters pruned …]\n${KETTLE.slice(-100)}`
/** Each summary call asks differently, so each one's best match is the conversation request it replays. */
const INSTRUCTIONS = [
  'Write a hand-over note of the work so far.',
  'Sum up what was found and changed so far.',
  'Summarize this session for the next engineer.',
  'List the facts a successor needs to go on.',
]

const user = (text: string): Step => ({ kind: 'user', text })
const call = (id: string, name: string, args: Record<string, unknown>): Step => ({ kind: 'call', id, name, args })
const result = (id: string, name: string, text: string): Step => ({ kind: 'result', id, name, text })

/** Lines of the scenario log and what each one is. */
export const SCENARIO = {
  conversation: [1, 2, 3],
  warmReplay: 4,
  droppedTools: 5,
  replacedSystem: 6,
  changedEffort: 7,
  rewroteToolResult: 8,
  append: 9,
} as const

/** Index, in each API's own message list, of the trailing instruction (line 4) and of the first tool result (rewritten on line 8), with its role. */
export const MESSAGE_INDEXES: Record<RequestApi, { instruction: number; toolResult: number; toolResultRole: string }> =
  {
    'openai-chat': { instruction: 6, toolResult: 3, toolResultRole: 'tool' },
    'openai-responses': { instruction: 5, toolResult: 2, toolResultRole: 'function_call_output' },
    'anthropic-messages': { instruction: 5, toolResult: 2, toolResultRole: 'user' },
    gemini: { instruction: 5, toolResult: 2, toolResultRole: 'user' },
  }

/** Sends the scenario through `api`'s SDK to `baseUrl` (a RecordingServer); lines 1–9 as in SCENARIO. */
export async function recordScenario(api: RequestApi, baseUrl: string): Promise<void> {
  const send = sender(api, baseUrl)
  const conversation: SendOptions = { tools: true, system: SYSTEM, effort: 'high', maxTokens: 2000, noise: false }
  const summary: SendOptions = { ...conversation, maxTokens: 6000 }
  const h1 = [user('The timer in src/kettle.ts fires one second late. Find out why and fix it.')]
  const h2 = [...h1, call('call_1', 'read_file', { path: 'src/kettle.ts' }), result('call_1', 'read_file', KETTLE)]
  const h3 = [...h2, call('call_2', 'run_tests', { filter: 'timer' }), result('call_2', 'run_tests', TESTS)]
  await send(h1, conversation)
  await send(h2, conversation)
  await send(h3, { ...conversation, noise: true })
  await send([...h3, user(INSTRUCTIONS[0] as string)], summary)
  await send([...h3, user(INSTRUCTIONS[1] as string)], { ...summary, tools: false })
  await send([...h3, user(INSTRUCTIONS[2] as string)], { ...summary, system: SUMMARIZER })
  await send([...h3, user(INSTRUCTIONS[3] as string)], { ...summary, effort: 'low' })
  const h4 = [
    ...h2.slice(0, 2),
    result('call_1', 'read_file', KETTLE_PRUNED),
    ...h3.slice(3),
    call('call_3', 'read_file', { path: 'src/clock.ts' }),
    result('call_3', 'read_file', CLOCK),
  ]
  await send(h4, conversation)
  await send([...h4, call('call_4', 'run_tests', {}), result('call_4', 'run_tests', 'all 25 tests passed')], {
    ...conversation,
    noise: true,
  })
}

function sender(api: RequestApi, baseUrl: string): Send {
  switch (api) {
    case 'openai-chat':
      return openAiChat(new OpenAI({ baseURL: `${baseUrl}/v1`, apiKey: 'test-key', maxRetries: 0 }))
    case 'openai-responses':
      return openAiResponses(new OpenAI({ baseURL: `${baseUrl}/v1`, apiKey: 'test-key', maxRetries: 0 }))
    case 'anthropic-messages':
      return anthropic(new Anthropic({ baseURL: baseUrl, apiKey: 'test-key', maxRetries: 0 }))
    case 'gemini':
      return gemini(new GoogleGenAI({ apiKey: 'test-key', httpOptions: { baseUrl } }))
  }
}

function openAiChat(client: OpenAI): Send {
  return async (history, options) => {
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'system', content: options.system }]
    for (const step of history) {
      if (step.kind === 'user') messages.push({ role: 'user', content: step.text })
      else if (step.kind === 'call')
        messages.push({
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: step.id, type: 'function', function: { name: step.name, arguments: JSON.stringify(step.args) } },
          ],
        })
      else messages.push({ role: 'tool', tool_call_id: step.id, content: step.text })
    }
    const body = {
      model: 'gpt-test',
      messages,
      reasoning_effort: options.effort,
      max_completion_tokens: options.maxTokens,
      ...(options.tools
        ? {
            tools: TOOLS.map(({ name, description, properties, required }) => ({
              type: 'function' as const,
              function: { name, description, parameters: { type: 'object', properties, required } },
            })),
          }
        : {}),
    }
    if (!options.noise) return client.chat.completions.create(body)
    const stream = await client.chat.completions.create({
      ...body,
      stream: true,
      stream_options: { include_usage: true },
      safety_identifier: 'user-4711',
      metadata: { turn: 'noisy' },
      store: true,
    })
    for await (const chunk of stream) void chunk
    return undefined
  }
}

function openAiResponses(client: OpenAI): Send {
  return (history, options) => {
    const input: OpenAI.Responses.ResponseInputItem[] = history.map((step): OpenAI.Responses.ResponseInputItem => {
      if (step.kind === 'user') return { role: 'user', content: step.text }
      // An agent that replays the output items it got back sends their ids and statuses too.
      if (step.kind === 'call')
        return {
          type: 'function_call',
          call_id: step.id,
          name: step.name,
          arguments: JSON.stringify(step.args),
          ...(options.noise ? { id: `fc_${step.id}`, status: 'completed' as const } : {}),
        }
      return { type: 'function_call_output', call_id: step.id, output: step.text }
    })
    return client.responses.create({
      model: 'gpt-test',
      instructions: options.system,
      input,
      reasoning: { effort: options.effort, ...(options.noise ? { summary: 'auto' as const } : {}) },
      max_output_tokens: options.maxTokens,
      store: false,
      ...(options.noise ? { metadata: { turn: 'noisy' }, include: ['reasoning.encrypted_content' as const] } : {}),
      ...(options.tools
        ? {
            tools: TOOLS.map(({ name, description, properties, required }) => ({
              type: 'function' as const,
              name,
              description,
              strict: false,
              parameters: { type: 'object', properties, required },
            })),
          }
        : {}),
    })
  }
}

function anthropic(client: Anthropic): Send {
  return (history, options) => {
    const messages: Anthropic.MessageParam[] = history.map((step): Anthropic.MessageParam => {
      if (step.kind === 'user') return { role: 'user', content: [{ type: 'text', text: step.text }] }
      if (step.kind === 'call')
        return { role: 'assistant', content: [{ type: 'tool_use', id: step.id, name: step.name, input: step.args }] }
      return { role: 'user', content: [{ type: 'tool_result', tool_use_id: step.id, content: step.text }] }
    })
    // Like most agents: a breakpoint on the last block, which moves every request.
    const last = messages.at(-1)?.content
    if (Array.isArray(last))
      last[last.length - 1] = {
        ...(last.at(-1) as Anthropic.ContentBlockParam),
        cache_control: { type: 'ephemeral' },
      } as Anthropic.ContentBlockParam
    return client.messages.create({
      model: 'claude-test',
      max_tokens: options.maxTokens,
      system: [{ type: 'text', text: options.system, cache_control: { type: 'ephemeral' } }],
      messages,
      output_config: { effort: options.effort },
      metadata: { user_id: `session-${history.length}` },
      ...(options.tools
        ? {
            tools: TOOLS.map(({ name, description, properties, required }) => ({
              name,
              description,
              input_schema: { type: 'object' as const, properties, required },
            })),
          }
        : {}),
    })
  }
}

function gemini(client: GoogleGenAI): Send {
  return (history, options) =>
    client.models.generateContent({
      model: 'gemini-test',
      contents: history.map((step) => {
        if (step.kind === 'user') return { role: 'user', parts: [{ text: step.text }] }
        if (step.kind === 'call')
          return { role: 'model', parts: [{ functionCall: { name: step.name, args: step.args } }] }
        return { role: 'user', parts: [{ functionResponse: { name: step.name, response: { output: step.text } } }] }
      }),
      config: {
        systemInstruction: options.system,
        maxOutputTokens: options.maxTokens,
        thinkingConfig: { thinkingLevel: options.effort === 'high' ? ThinkingLevel.HIGH : ThinkingLevel.LOW },
        ...(options.tools
          ? {
              tools: [
                {
                  functionDeclarations: TOOLS.map(({ name, description, properties, required }) => ({
                    name,
                    description,
                    parametersJsonSchema: { type: 'object', properties, required },
                  })),
                },
              ],
            }
          : {}),
      },
    })
}
