import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createAnthropic } from '@ai-sdk/anthropic'
import { COMPACTION_INSTRUCTION } from '@warmfold/compaction-basic'
import type { GenerateOptions, LlmAdapter, Message } from '@warmfold/llm'
import {
  ContentAssembler,
  createAssistantMessage,
  createToolResultMessage,
  createUserMessage,
  textBlock,
  toolCallBlock,
} from '@warmfold/llm'
import { AiSdkLlmAdapter, parseAiSdkConfig } from '@warmfold/llm-ai-sdk'
import { AnthropicLlmAdapter, parseAnthropicConfig } from '@warmfold/llm-anthropic'
import { GoogleLlmAdapter, parseGoogleConfig } from '@warmfold/llm-google'
import { ChatCompletionsAdapter, parseOpenAICompatibleConfig } from '@warmfold/llm-openai-compatible'
import { parseResponsesConfig, ResponsesLlmAdapter } from '@warmfold/llm-openai-responses'
import { RecordingServer } from '@warmfold/test-utils'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { DoctorReport } from '../src/index.ts'
import { runCli } from '../src/index.ts'
import { okReplyFor } from './support/adapter-replies.ts'

// `warmfold doctor` on what warmfold's own adapters put on the wire: a growing conversation and
// a warm summary call, each adapter's cache markers included (OpenAI explicit breakpoints,
// Anthropic's strided cache_control). The doctor must see no break in the conversation and a
// summary that diverges only where its instruction starts.

let directory: string
beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'warmfold-doctor-adapters-'))
})
afterAll(async () => {
  await rm(directory, { recursive: true, force: true })
})

const TOOLS = [
  {
    name: 'read',
    description: 'Read a file',
    parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  },
]
const ORIGIN = { provider: 'p', model: 'm' }

/** Step `n` of a conversation: n tool round trips after the task. */
function conversation(steps: number): Message[] {
  const messages: Message[] = [createUserMessage('Refactor the loader.')]
  for (let step = 0; step < steps; step++) {
    messages.push(
      createAssistantMessage(
        [textBlock(`Reading file ${step}.`), toolCallBlock(`call_${step}`, 'read', `{"path":"src/f${step}.ts"}`)],
        ORIGIN,
      ),
    )
    messages.push(createToolResultMessage(`call_${step}`, `export const value${step} = ${step} // ${'x'.repeat(400)}`))
  }
  return messages
}

interface Subject {
  readonly name: string
  readonly model: string
  readonly build: (origin: string) => LlmAdapter
  readonly effort?: string
  /** Whether the wire merges the instruction into the last user turn (the tool results). */
  readonly mergesInstruction: boolean
}

const SUBJECTS: Subject[] = [
  {
    name: 'chat completions (dialect openai, explicit breakpoints)',
    model: 'gpt-test',
    effort: 'high',
    mergesInstruction: false,
    build: (origin) => {
      const config = parseOpenAICompatibleConfig({
        provider: 'p',
        baseURL: `${origin}/v1`,
        dialect: 'openai',
        models: { 'gpt-test': { contextWindow: 400_000, cacheBreakpoints: true, efforts: ['high'] } },
        maxRetries: 0,
      })
      return new ChatCompletionsAdapter({ ...config, apiKey: 'sk-test' })
    },
  },
  {
    name: 'OpenAI Responses (stateless)',
    model: 'gpt-test',
    effort: 'high',
    mergesInstruction: false,
    build: (origin) => {
      const config = parseResponsesConfig({
        baseURL: `${origin}/v1`,
        apiKey: 'sk-test',
        models: { 'gpt-test': { contextWindow: 400_000, efforts: ['high'] } },
        maxRetries: 0,
      })
      return new ResponsesLlmAdapter(config, 'sk-test')
    },
  },
  {
    name: 'anthropic (strided cache_control)',
    model: 'claude-test',
    mergesInstruction: true,
    build: (origin) => {
      const config = parseAnthropicConfig({
        baseURL: origin,
        apiKey: 'sk-ant-test',
        models: { 'claude-test': { contextWindow: 200_000, defaultMaxTokens: 1000 } },
        maxRetries: 0,
      })
      return new AnthropicLlmAdapter(config, 'sk-ant-test')
    },
  },
  {
    name: 'gemini',
    model: 'gemini-2.5-flash',
    effort: 'high',
    mergesInstruction: true,
    build: (origin) => {
      const config = parseGoogleConfig({
        baseURL: origin,
        apiKey: 'gemini-test',
        models: { 'gemini-2.5-flash': { contextWindow: 1_048_576 } },
        maxRetries: 0,
      })
      return new GoogleLlmAdapter(config, 'gemini-test')
    },
  },
  {
    name: 'AI SDK (@ai-sdk/anthropic)',
    model: 'main',
    mergesInstruction: true,
    build: (origin) => {
      const model = createAnthropic({ baseURL: `${origin}/v1`, apiKey: 'sk-ant-test' })('claude-test')
      return new AiSdkLlmAdapter(
        parseAiSdkConfig({
          provider: 'p',
          models: { main: { model, contextWindow: 200_000, defaultMaxTokens: 1000 } },
          maxRetries: 0,
        }),
      )
    },
  },
]

async function send(adapter: LlmAdapter, options: GenerateOptions): Promise<void> {
  const assembler = new ContentAssembler()
  for await (const chunk of adapter.stream(options)) assembler.push(chunk)
  assembler.result()
}

describe.each(SUBJECTS)('warmfold doctor on the requests of $name', (subject) => {
  let report: DoctorReport
  beforeAll(async () => {
    const server = await RecordingServer.start((request) =>
      okReplyFor(new URL(request.url, 'http://x').pathname + new URL(request.url, 'http://x').search),
    )
    try {
      const adapter = subject.build(server.origin)
      const envelope = {
        provider: 'p',
        model: subject.model,
        system: 'You are a coding agent.',
        tools: TOOLS,
        sessionId: 'doctor-session',
        ...(subject.effort ? { reasoningEffort: subject.effort } : {}),
      }
      // A step that appends 30 tool round trips (60 blocks), then two ordinary steps, then the summary call.
      for (const steps of [1, 31, 32, 33])
        await send(adapter, { ...envelope, purpose: 'conversation', messages: conversation(steps) })
      await send(adapter, {
        ...envelope,
        purpose: 'compaction',
        maxTokens: 4000,
        messages: [...conversation(33), createUserMessage(COMPACTION_INSTRUCTION)],
      })
      const file = join(directory, `${subject.model}.jsonl`)
      await writeFile(
        file,
        server.requests.map((request) => `${JSON.stringify({ url: request.url, body: request.json })}\n`).join(''),
      )
      let stdout = ''
      const code = await runCli(['doctor', file, '--json'], {
        stdout: (text) => void (stdout += text),
        stderr: () => undefined,
      })
      expect(code).toBe(0)
      report = JSON.parse(stdout) as DoctorReport
    } finally {
      await server.close()
    }
  })

  it('reads every request and finds the conversation append-only: each one reads all of the previous', () => {
    expect(report.unreadable).toEqual([])
    expect(report.requests).toHaveLength(5)
    for (const index of [2, 3, 4]) {
      const request = report.requests[index - 1]!
      expect(request.changes).toEqual([])
      expect(request.bestMatch).toBe(index - 1)
      expect(request.cachedChars).toBe(report.requests[index - 2]!.promptChars)
    }
  })

  it('finds the summary call a warm replay: no change, diverging only where the instruction joins the last turn', () => {
    const summary = report.requests[4]!
    const last = report.requests[3]!
    expect(summary.changes).toEqual([])
    expect(summary.bestMatch).toBe(4)
    expect(report.breaks).toEqual([])
    expect(summary.divergence).toMatchObject({ part: 'messages', role: 'user' })
    // Chat completions sends the instruction as its own message, so the whole last request is
    // read; Anthropic and Gemini merge it into the last user turn (the tool results), so the
    // doctor's character count stops at that turn's closing brackets, inside the same message.
    if (subject.mergesInstruction) {
      expect(summary.cachedChars).toBeLessThan(last.promptChars)
      expect(last.promptChars - summary.cachedChars).toBeLessThan(32)
    } else expect(summary.cachedChars).toBe(last.promptChars)
  })
})
