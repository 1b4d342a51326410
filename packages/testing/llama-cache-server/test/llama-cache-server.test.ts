import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LlamaCacheServer } from '../src/index.ts'
import { startLlamaCacheServer, writeTinyGguf } from '../src/index.ts'

/** Tokens a request may re-evaluate beyond what it appended (none are needed with this template; kept small on purpose). */
const SLACK = 2

interface Usage {
  prompt_tokens: number
  completion_tokens: number
  total_tokens: number
  prompt_tokens_details: { cached_tokens: number }
}

interface Timings {
  cache_n: number
  prompt_n: number
  prompt_ms: number
  predicted_n: number
  predicted_ms: number
}

interface Completion {
  id: string
  object: string
  choices: Array<{ index: number; message: { role: string; content: string }; finish_reason: string }>
  usage: Usage
  timings: Timings
}

type WireMessage = Record<string, unknown>

async function post(
  server: LlamaCacheServer,
  body: unknown,
  path = '/v1/chat/completions',
): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  })
  return { status: response.status, body: await response.json() }
}

async function chat(server: LlamaCacheServer, body: Record<string, unknown>): Promise<Completion> {
  const { status, body: completion } = await post(server, body)
  expect(status, JSON.stringify(completion)).toBe(200)
  return completion as Completion
}

/** Every `data:` payload of an SSE body, `[DONE]` included as a string. */
function sseEvents(text: string): unknown[] {
  expect(text.endsWith('\n\n')).toBe(true)
  return text
    .split('\n\n')
    .filter((event) => event.length > 0)
    .map((event) => {
      expect(event.startsWith('data: ')).toBe(true)
      const data = event.slice('data: '.length)
      return data === '[DONE]' ? data : JSON.parse(data)
    })
}

const SYSTEM = Array.from(
  { length: 30 },
  (_, index) => `Rule ${index}: read the file before you write to it, and return the test value with this function.`,
).join('\n')

const TOOLS = [
  {
    type: 'function',
    function: {
      name: 'read',
      description: 'Read a file',
      parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    },
  },
  {
    type: 'function',
    function: {
      name: 'write',
      description: 'Write a file',
      parameters: {
        type: 'object',
        properties: { path: { type: 'string' }, text: { type: 'string' } },
        required: ['path', 'text'],
      },
    },
  },
]

function toolCall(step: number): WireMessage {
  return {
    role: 'assistant',
    content: null,
    reasoning_content: `I need file ${step}.`,
    tool_calls: [
      { id: `call_${step}`, type: 'function', function: { name: 'read', arguments: `{"path":"src/file-${step}.ts"}` } },
    ],
  }
}

function toolResult(step: number): WireMessage {
  const lines = Array.from(
    { length: 10 },
    (_, line) => `export const value${line} = ${step * line} // line ${line} of file ${step}`,
  )
  return { role: 'tool', tool_call_id: `call_${step}`, content: lines.join('\n') }
}

/** The start of a conversation whose system prompt begins with a clock reading (a classic cache breaker). */
function timestamped(seconds: string): WireMessage[] {
  return [
    { role: 'system', content: `Current time: 2026-08-13T10:00:${seconds}Z\n${SYSTEM}` },
    { role: 'user', content: 'Fix the failing test.' },
  ]
}

/** Asserts the engine's own numbers agree with each other and with the server's record of the request. */
function expectConsistent(server: LlamaCacheServer, completion: Completion): void {
  const { usage, timings } = completion
  expect(timings.cache_n).toBe(usage.prompt_tokens_details.cached_tokens)
  expect(timings.prompt_n).toBe(usage.prompt_tokens - usage.prompt_tokens_details.cached_tokens)
  expect(usage.total_tokens).toBe(usage.prompt_tokens + usage.completion_tokens)
  const record = server.records.at(-1)!
  expect(record).toMatchObject({
    promptTokens: usage.prompt_tokens,
    cachedTokens: usage.prompt_tokens_details.cached_tokens,
    evaluatedTokens: timings.prompt_n,
    completionTokens: usage.completion_tokens,
  })
  expect(record.firstDifferentIndex).toBeGreaterThanOrEqual(record.cachedTokens)
}

/** Two conversations with different system prompts, requests interleaved A, B, A, B, ... */
async function interleave(server: LlamaCacheServer): Promise<{ a: Completion[]; b: Completion[] }> {
  const a: WireMessage[] = [
    { role: 'system', content: `Project alpha.\n${SYSTEM}` },
    { role: 'user', content: 'Fix the parser.' },
  ]
  const b: WireMessage[] = [
    { role: 'system', content: `Project beta.\n${SYSTEM}` },
    { role: 'user', content: 'Fix the printer.' },
  ]
  const results = { a: [] as Completion[], b: [] as Completion[] }
  for (let step = 0; step < 3; step++) {
    for (const [name, messages] of [
      ['a', a],
      ['b', b],
    ] as const) {
      const completion = await chat(server, { messages, tools: TOOLS })
      expectConsistent(server, completion)
      results[name].push(completion)
      messages.push(toolCall(step), toolResult(step))
    }
  }
  return results
}

let directory = ''
let modelPath = ''
beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'llama-cache-server-test-'))
  modelPath = join(directory, 'tiny-llama.gguf')
  await writeTinyGguf(modelPath)
})
afterAll(async () => {
  await rm(directory, { recursive: true, force: true })
})

describe('one slot', { timeout: 30_000 }, () => {
  let server: LlamaCacheServer
  beforeAll(async () => {
    server = await startLlamaCacheServer({ modelPath })
  }, 30_000)
  afterAll(async () => {
    await server?.close()
  })

  it('loads the generated model and lists it', async () => {
    expect(server.contextSize).toBeGreaterThanOrEqual(32768)
    const models = (await (await fetch(`${server.url}/v1/models`)).json()) as { data: Array<{ id: string }> }
    expect(models.data.map((model) => model.id)).toEqual(['tiny-llama.gguf'])
    expect(await (await fetch(`${server.url}/health`)).json()).toEqual({ status: 'ok' })
  })

  it('answers a plain request with an OpenAI chat.completion carrying usage and llama-server timings', async () => {
    const completion = await chat(server, { model: 'tiny', messages: [{ role: 'user', content: 'Say ok.' }] })
    expect(completion).toMatchObject({
      object: 'chat.completion',
      choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
      usage: { completion_tokens: 2 },
    })
    expectConsistent(server, completion)
    // max_tokens cuts the answer before the steered EOS.
    const capped = await chat(server, { messages: [{ role: 'user', content: 'Say ok.' }], max_tokens: 1 })
    expect(capped.choices[0]).toMatchObject({ message: { content: 'ok' }, finish_reason: 'length' })
    expect(capped.usage.completion_tokens).toBe(1)
    // An identical prompt reuses everything but the last token, which is evaluated to get logits.
    expect(capped.usage.prompt_tokens_details.cached_tokens).toBe(capped.usage.prompt_tokens - 1)
  })

  it('streams SSE chunks in OpenAI shapes, with a usage chunk and [DONE]', async () => {
    const response = await fetch(`${server.baseURL}/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({
        messages: [{ role: 'user', content: 'Stream ok.' }],
        stream: true,
        stream_options: { include_usage: true },
      }),
    })
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/)
    const events = sseEvents(await response.text())
    expect(events.at(-1)).toBe('[DONE]')
    const chunks = events.slice(0, -1) as Array<{
      id: string
      object: string
      choices: Array<{ delta: { content?: string }; finish_reason: string | null }>
      usage: Usage | null
      timings?: Timings
    }>
    expect(new Set(chunks.map((chunk) => chunk.id)).size).toBe(1)
    expect(chunks.every((chunk) => chunk.object === 'chat.completion.chunk')).toBe(true)
    expect(chunks[0]!.choices[0]!.delta).toEqual({ role: 'assistant', content: '' })
    expect(chunks.flatMap((chunk) => chunk.choices.map((choice) => choice.delta.content ?? '')).join('')).toBe('ok')
    expect(chunks.at(-2)!.choices[0]!.finish_reason).toBe('stop')
    const last = chunks.at(-1)!
    expect(last.choices).toEqual([])
    expect(last.usage!.prompt_tokens).toBeGreaterThan(0)
    expect(last.timings!.prompt_n).toBe(last.usage!.prompt_tokens - last.usage!.prompt_tokens_details.cached_tokens)
    expect(server.records.at(-1)).toMatchObject({
      promptTokens: last.usage!.prompt_tokens,
      cachedTokens: last.usage!.prompt_tokens_details.cached_tokens,
    })
  })

  it('evaluates only what each request of a tool conversation appends', async () => {
    const messages: WireMessage[] = [
      { role: 'system', content: SYSTEM },
      { role: 'user', content: 'Fix the failing test.' },
    ]
    let previous: Completion | undefined
    for (let step = 0; step < 6; step++) {
      const completion = await chat(server, { messages, tools: TOOLS, reasoning_effort: 'high' })
      expectConsistent(server, completion)
      expect(server.records.at(-1)!.slot).toBe(0)
      if (previous !== undefined) {
        const { usage, timings } = completion
        expect(usage.prompt_tokens).toBeGreaterThan(previous.usage.prompt_tokens)
        expect(usage.prompt_tokens_details.cached_tokens).toBeGreaterThanOrEqual(previous.usage.prompt_tokens - SLACK)
        expect(timings.prompt_n).toBeLessThanOrEqual(usage.prompt_tokens - previous.usage.prompt_tokens + SLACK)
      }
      previous = completion
      if (step === 3) {
        // Replaying the model's own answer and a new user turn is an append too.
        messages.push(
          { role: 'assistant', content: completion.choices[0]!.message.content },
          { role: 'user', content: 'Go on.' },
        )
      } else {
        messages.push(toolCall(step), toolResult(step))
      }
    }
  })

  it('loses the whole prefix when only the reasoning effort changes, because it is rendered first', async () => {
    const body = {
      messages: [
        { role: 'system', content: SYSTEM },
        { role: 'user', content: 'Plan the fix.' },
      ],
      tools: TOOLS,
    }
    expectConsistent(server, await chat(server, { ...body, reasoning_effort: 'high' }))
    const max = await chat(server, { ...body, reasoning_effort: 'max' })
    expectConsistent(server, max)
    const again = await chat(server, { ...body, reasoning_effort: 'max' })
    expectConsistent(server, again)
    expect(max.usage.prompt_tokens).toBeGreaterThan(1000)
    // Only BOS and the label "Reasoning effort: " (18 tokens) precede the effort value.
    expect(max.usage.prompt_tokens_details.cached_tokens).toBeLessThanOrEqual(20)
    expect(again.usage.prompt_tokens_details.cached_tokens).toBe(again.usage.prompt_tokens - 1)
  })

  it('negative control: a timestamp at the top of the system prompt destroys reuse', async () => {
    const first = await chat(server, { messages: timestamped('00'), tools: TOOLS })
    const second = await chat(server, { messages: [...timestamped('07'), toolCall(0), toolResult(0)], tools: TOOLS })
    expectConsistent(server, second)
    // The append-only check of the conversation test fails here, as it must.
    expect(second.usage.prompt_tokens_details.cached_tokens).toBeLessThan(first.usage.prompt_tokens - SLACK)
    expect(second.usage.prompt_tokens_details.cached_tokens).toBeLessThan(40)
    expect(second.timings.prompt_n).toBeGreaterThan(second.usage.prompt_tokens * 0.95)
  })

  it('with one slot, two interleaved conversations evict each other', async () => {
    const { a, b } = await interleave(server)
    for (const completion of [...a.slice(1), ...b.slice(1)]) {
      expect(completion.usage.prompt_tokens_details.cached_tokens).toBeLessThan(20)
    }
  })

  it('serves concurrent requests one at a time, each with its own exact numbers', async () => {
    const before = server.records.length
    const bodies = ['alpha', 'beta', 'gamma'].map((name) => ({
      messages: [
        { role: 'system', content: `Project ${name}.\n${SYSTEM}` },
        { role: 'user', content: 'Go.' },
      ],
    }))
    const completions = await Promise.all(bodies.map((body) => chat(server, body)))
    const records = server.records.slice(before)
    expect(records).toHaveLength(3)
    for (const completion of completions) {
      expect(completion.timings.prompt_n).toBe(
        completion.usage.prompt_tokens - completion.usage.prompt_tokens_details.cached_tokens,
      )
      expect(records).toContainEqual(
        expect.objectContaining({
          cachedTokens: completion.usage.prompt_tokens_details.cached_tokens,
          evaluatedTokens: completion.timings.prompt_n,
        }),
      )
    }
  })

  it('answers bad requests with 400 naming the field, and unknown routes with 404', async () => {
    const records = server.records.length
    expect(await post(server, '{"messages": [')).toMatchObject({
      status: 400,
      body: { error: { code: 400, type: 'invalid_request_error', message: expect.stringContaining('not valid JSON') } },
    })
    expect(await post(server, { messages: [{ role: 'tool', content: 'x' }] })).toMatchObject({
      status: 400,
      body: { error: { type: 'invalid_request_error', message: expect.stringContaining('messages[0].tool_call_id') } },
    })
    expect(await post(server, { messages: [{ role: 'user', content: 'x' }] }, '/v1/completions')).toMatchObject({
      status: 404,
      body: { error: { code: 404 } },
    })
    expect((await fetch(`${server.url}/v1/chat/completions`)).status).toBe(404)
    // Routes answer without the /v1 prefix too, as llama-server's do.
    expect((await post(server, { messages: [{ role: 'user', content: 'x' }] }, '/chat/completions')).status).toBe(200)
    expect(server.records).toHaveLength(records + 1)
  })
})

describe('two slots', { timeout: 30_000 }, () => {
  let server: LlamaCacheServer
  beforeAll(async () => {
    server = await startLlamaCacheServer({ modelPath, slots: 2 })
  }, 30_000)
  afterAll(async () => {
    await server?.close()
  })

  it('keeps each of two interleaved conversations in its own slot with its prefix', async () => {
    const { a, b } = await interleave(server)
    const slots = server.records.map((record) => record.slot)
    expect(slots).toEqual([0, 1, 0, 1, 0, 1])
    for (const turns of [a, b]) {
      for (let step = 1; step < turns.length; step++) {
        expect(turns[step]!.usage.prompt_tokens_details.cached_tokens).toBeGreaterThanOrEqual(
          turns[step - 1]!.usage.prompt_tokens - SLACK,
        )
      }
    }
  })
})

describe('a prompt larger than the context', { timeout: 30_000 }, () => {
  let server: LlamaCacheServer
  beforeAll(async () => {
    server = await startLlamaCacheServer({ modelPath, contextSize: 2048 })
  }, 30_000)
  afterAll(async () => {
    await server?.close()
  })

  it("is rejected with llama-server's 400 exceed_context_size_error, streamed or not, and the server keeps serving", async () => {
    expect(server.contextSize).toBe(2048)
    const messages = [
      { role: 'system', content: `${SYSTEM}\n${SYSTEM}` },
      { role: 'user', content: 'Too long.' },
    ]
    const expected = {
      status: 400,
      body: {
        error: {
          code: 400,
          type: 'exceed_context_size_error',
          message: 'the request exceeds the available context size, try increasing it',
          n_ctx: 2048,
          n_prompt_tokens: expect.any(Number),
        },
      },
    }
    const plain = await post(server, { messages })
    expect(plain).toMatchObject(expected)
    expect((plain.body as { error: { n_prompt_tokens: number } }).error.n_prompt_tokens).toBeGreaterThanOrEqual(2048)
    expect(await post(server, { messages, stream: true, stream_options: { include_usage: true } })).toMatchObject(
      expected,
    )
    expect(server.records).toHaveLength(0)
    const fits = await chat(server, { messages: [{ role: 'user', content: 'Short.' }] })
    expect(fits.choices[0]!.message.content).toBe('ok')
    expect(server.records).toHaveLength(1)
  })
})
