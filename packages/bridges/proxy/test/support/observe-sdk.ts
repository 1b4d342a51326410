import Anthropic from '@anthropic-ai/sdk'
import { GoogleGenAI } from '@google/genai'
import OpenAI from 'openai'
import type { RequestApi } from '@warmfold/cache-ledger/prefix'
import type { CapturedRequest } from './observe-capture.ts'
import { CaptureServer } from './observe-capture.ts'

/** One step of a coding session: a user turn, a tool call, its result. */
export type Step =
  | { readonly kind: 'user'; readonly text: string }
  | { readonly kind: 'call'; readonly id: string; readonly name: string; readonly args: Record<string, unknown> }
  | { readonly kind: 'result'; readonly id: string; readonly name: string; readonly text: string }

export const user = (text: string): Step => ({ kind: 'user', text })
export const call = (id: string, name: string, args: Record<string, unknown>): Step => ({
  kind: 'call',
  id,
  name,
  args,
})
export const result = (id: string, name: string, text: string): Step => ({ kind: 'result', id, name, text })

/** How one request is sent. */
export interface SendOptions {
  readonly system?: string
  readonly tools?: boolean
  readonly effort?: 'high' | 'low'
  /** Extra request headers (a session header, a credential to plant). */
  readonly headers?: Record<string, string>
  /** Responses `prompt_cache_key`, Anthropic `metadata.user_id`. */
  readonly sessionInBody?: string
  readonly apiKey?: string
}

export const SYSTEM = 'You are Tinker, a careful assistant in the repository of kettle-timer. Read before you edit.'
const TOOLS = [
  { name: 'read_file', description: 'Return the text of one file.', properties: { path: { type: 'string' } } },
  { name: 'run_tests', description: 'Run the test suite.', properties: { filter: { type: 'string' } } },
]

/** A long tool result, so predicted token counts are not all zero. */
export const KETTLE = Array.from(
  { length: 60 },
  (_, line) => `export const step${line} = (ms: number) => ms + ${line}`,
).join('\n')
export const TESTS = Array.from({ length: 30 }, (_, line) => `✓ timer ${line} fires after its delay`).join('\n')

/** A short coding session: h1 ⊂ h2 ⊂ h3, each a conversation request's history. */
export const H1 = [user('The timer in src/kettle.ts fires one second late. Find out why and fix it.')]
export const H2 = [...H1, call('call_1', 'read_file', { path: 'src/kettle.ts' }), result('call_1', 'read_file', KETTLE)]
export const H3 = [...H2, call('call_2', 'run_tests', { filter: 'timer' }), result('call_2', 'run_tests', TESTS)]

/** Sends each request through `api`'s official SDK to a capture server and returns what went over the wire. */
export async function capture(
  api: RequestApi,
  requests: ReadonlyArray<readonly [readonly Step[], SendOptions]>,
): Promise<CapturedRequest[]> {
  const server = await new CaptureServer().start()
  try {
    for (const [history, options] of requests) await send(api, server.url, history, options)
  } finally {
    await server.close()
  }
  return server.requests
}

async function send(api: RequestApi, baseUrl: string, history: readonly Step[], options: SendOptions): Promise<void> {
  const system = options.system ?? SYSTEM
  const tools = options.tools ?? true
  const apiKey = options.apiKey ?? 'test-key'
  const headers = options.headers ?? {}
  if (api === 'openai-chat' || api === 'openai-responses') {
    const client = new OpenAI({ baseURL: `${baseUrl}/v1`, apiKey, maxRetries: 0, defaultHeaders: headers })
    if (api === 'openai-chat') {
      const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'system', content: system }]
      for (const step of history)
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
      await client.chat.completions.create({
        model: 'gpt-test',
        messages,
        reasoning_effort: options.effort ?? 'high',
        ...(tools
          ? {
              tools: TOOLS.map(({ name, description, properties }) => ({
                type: 'function' as const,
                function: { name, description, parameters: { type: 'object', properties } },
              })),
            }
          : {}),
      })
      return
    }
    await client.responses.create({
      model: 'gpt-test',
      instructions: system,
      input: history.map((step): OpenAI.Responses.ResponseInputItem => {
        if (step.kind === 'user') return { role: 'user', content: step.text }
        if (step.kind === 'call')
          return { type: 'function_call', call_id: step.id, name: step.name, arguments: JSON.stringify(step.args) }
        return { type: 'function_call_output', call_id: step.id, output: step.text }
      }),
      reasoning: { effort: options.effort ?? 'high' },
      store: false,
      ...(options.sessionInBody ? { prompt_cache_key: options.sessionInBody } : {}),
      ...(tools
        ? {
            tools: TOOLS.map(({ name, description, properties }) => ({
              type: 'function' as const,
              name,
              description,
              strict: false,
              parameters: { type: 'object', properties },
            })),
          }
        : {}),
    })
    return
  }
  if (api === 'anthropic-messages') {
    const client = new Anthropic({ baseURL: baseUrl, apiKey, maxRetries: 0, defaultHeaders: headers })
    await client.messages.create({
      model: 'claude-test',
      max_tokens: 2000,
      system: [{ type: 'text', text: system }],
      messages: history.map((step): Anthropic.MessageParam => {
        if (step.kind === 'user') return { role: 'user', content: [{ type: 'text', text: step.text }] }
        if (step.kind === 'call')
          return { role: 'assistant', content: [{ type: 'tool_use', id: step.id, name: step.name, input: step.args }] }
        return { role: 'user', content: [{ type: 'tool_result', tool_use_id: step.id, content: step.text }] }
      }),
      output_config: { effort: options.effort ?? 'high' },
      ...(options.sessionInBody ? { metadata: { user_id: options.sessionInBody } } : {}),
      ...(tools
        ? {
            tools: TOOLS.map(({ name, description, properties }) => ({
              name,
              description,
              input_schema: { type: 'object' as const, properties },
            })),
          }
        : {}),
    })
    return
  }
  const client = new GoogleGenAI({ apiKey, httpOptions: { baseUrl, headers } })
  await client.models.generateContent({
    model: 'gemini-test',
    contents: history.map((step) => {
      if (step.kind === 'user') return { role: 'user', parts: [{ text: step.text }] }
      if (step.kind === 'call')
        return { role: 'model', parts: [{ functionCall: { name: step.name, args: step.args } }] }
      return { role: 'user', parts: [{ functionResponse: { name: step.name, response: { output: step.text } } }] }
    }),
    config: {
      systemInstruction: system,
      temperature: options.effort === 'low' ? 0.2 : 1,
      ...(tools
        ? {
            tools: [
              {
                functionDeclarations: TOOLS.map(({ name, description, properties }) => ({
                  name,
                  description,
                  parametersJsonSchema: { type: 'object', properties },
                })),
              },
            ],
          }
        : {}),
    },
  })
}
