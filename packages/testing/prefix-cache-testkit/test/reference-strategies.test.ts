import { Context } from '@cordisjs/core'
import type { BasicCompactionEngine, SummaryRequestInput } from '@warmfold/compaction-basic'
import { COMPACTION_INSTRUCTION } from '@warmfold/compaction-basic'
import { parseCompactionConfig, resolvePolicy } from '@warmfold/compaction-basic/engine-parts'
import type { GenerateOptions, Message, ToolDefinition } from '@warmfold/llm'
import {
  createAssistantMessage,
  createToolResultMessage,
  createUserMessage,
  textBlock,
  toolCallBlock,
} from '@warmfold/llm'
import type { RequestHeader } from '@warmfold/session'
import { afterEach, describe, expect, it } from 'vitest'
import { fillerText, mountWarmfoldHost, regionCoverage, runWorkload } from '../src/index.ts'
import { LONG_COMPACTION_INSTRUCTION, LONG_INSTRUCTION_CHARS } from '../src/long-compaction-instruction.ts'
import {
  LongInstructionCompactionEngine,
  ToollessCompactionEngine,
  TRANSCRIPT_SUMMARIZER_SYSTEM,
  TranscriptCompactionEngine,
} from '../src/reference-strategies.ts'

const TOOLS: readonly ToolDefinition[] = [
  {
    name: 'read_file',
    description: 'Read a file.',
    parameters: { type: 'object', properties: { path: { type: 'string' } } },
  },
]
const HEADER = {
  config: { provider: 'sim', model: 'coder', reasoningEffort: 'max', temperature: 0.2 },
  system: 'You are a coding agent.',
  tools: TOOLS,
} as unknown as RequestHeader
const ORIGIN = { provider: 'sim', model: 'coder' }

/** A strategy engine whose summary request builder a test can call directly. */
function exposed(engine: typeof BasicCompactionEngine) {
  return class extends engine {
    build(regionMessages: readonly Message[]): GenerateOptions {
      const input: SummaryRequestInput = {
        header: HEADER,
        policy: resolvePolicy(parseCompactionConfig({}), 'sim', 'coder'),
        regionMessages,
        replayMessages: regionMessages,
        sessionId: 's1',
      }
      return this.buildSummaryRequest(input)
    }
  }
}

const contexts: Context[] = []
afterEach(async () => {
  for (const ctx of contexts.splice(0)) await ctx.stop()
})

async function build(engine: typeof BasicCompactionEngine, region: readonly Message[]): Promise<GenerateOptions> {
  const Engine = exposed(engine)
  const ctx = new Context()
  contexts.push(ctx)
  await ctx.start()
  mountWarmfoldHost(ctx, { engine: Engine })
  return (ctx as unknown as { compaction: InstanceType<typeof Engine> }).compaction.build(region)
}

/** user prompt, then two tool steps: results of 2,000 and 2,001 characters. */
function region(): Message[] {
  return [
    createUserMessage('Read both modules.'),
    createAssistantMessage([textBlock('Reading a.'), toolCallBlock('c1', 'read_file', '{"path":"a.ts"}')], ORIGIN),
    createToolResultMessage('c1', 'a'.repeat(2000)),
    createAssistantMessage([textBlock('Reading b.'), toolCallBlock('c2', 'read_file', '{"path":"b.ts"}')], ORIGIN),
    createToolResultMessage('c2', `${'b'.repeat(2000)}Z`),
  ]
}

describe('reference strategy transcript (pi 0.73.1, opencode 1.18.33)', () => {
  it('sends its own system prompt, no tools, one user message: the transcript with tool results cut at 2,000 characters, then the instruction', async () => {
    const request = await build(TranscriptCompactionEngine, region())
    expect(request.system).toBe(TRANSCRIPT_SUMMARIZER_SYSTEM)
    expect(request.tools).toBeUndefined()
    expect(request.reasoningEffort).toBeUndefined()
    expect(request.purpose).toBe('compaction')
    expect(request.messages).toHaveLength(1)
    const [message] = request.messages as [Message]
    expect(message.role).toBe('user')
    expect(message.content).toHaveLength(1)
    const text = (message.content[0] as { text: string }).text
    expect(text.endsWith(`</conversation>\n\n${COMPACTION_INSTRUCTION}`)).toBe(true)
    // Exactly 2,000 characters are kept whole; the 2,001st is cut and the cut is said.
    expect(text).toContain(`(tool result) ${'a'.repeat(2000)}\n\nassistant:`)
    expect(text).toContain(`(tool result) ${'b'.repeat(2000)}\n[… 1 more characters truncated]`)
    expect(text).not.toContain(`${'b'.repeat(2000)}Z`)
    expect(text).toContain('(tool call read_file) {"path":"b.ts"}')
    // Every region character but the cut "Z" is carried.
    const total =
      'Read both modules.'.length +
      2 * ('Reading a.'.length + 'read_file'.length + '{"path":"a.ts"}'.length) +
      2000 +
      2001
    expect(regionCoverage(region(), request)).toBe((total - 1) / total)
  })
})

describe('reference strategy toolless (Codex CLI 0.171.0, Qwen Code 0.24.4)', () => {
  it('replays the region exactly with the conversation system prompt and settings, no tool definitions, instruction last', async () => {
    const messages = region()
    const request = await build(ToollessCompactionEngine, messages)
    expect('tools' in request).toBe(false)
    expect(request.system).toBe(HEADER.system)
    expect(request).toMatchObject({
      provider: 'sim',
      model: 'coder',
      reasoningEffort: 'max',
      temperature: 0.2,
      purpose: 'compaction',
    })
    expect(request.messages.slice(0, -1)).toEqual(messages)
    expect(request.messages.at(-1)).toMatchObject({
      role: 'user',
      content: [{ type: 'text', text: COMPACTION_INSTRUCTION }],
    })
    expect(regionCoverage(messages, request)).toBe(1)
  })
})

describe('reference strategy long-instruction (Claude Code 2.1.332)', () => {
  it('has a 6,400-character instruction that starts with warmfold’s', () => {
    expect(LONG_INSTRUCTION_CHARS).toBe(6400)
    expect(LONG_COMPACTION_INSTRUCTION).toHaveLength(6400)
    expect(LONG_COMPACTION_INSTRUCTION.startsWith(COMPACTION_INSTRUCTION)).toBe(true)
  })

  it('appends the instruction to a last plain user message, keeping system, tools and settings', async () => {
    const messages = [
      ...region(),
      createAssistantMessage([textBlock('Both read.')], ORIGIN),
      createUserMessage('Now summarize the plan.'),
    ]
    const request = await build(LongInstructionCompactionEngine, messages)
    expect(request).toMatchObject({
      provider: 'sim',
      model: 'coder',
      reasoningEffort: 'max',
      temperature: 0.2,
      purpose: 'compaction',
      system: HEADER.system,
      tools: TOOLS,
    })
    expect(request.messages).toHaveLength(messages.length)
    expect(request.messages.slice(0, -1)).toEqual(messages.slice(0, -1))
    const last = request.messages.at(-1) as Message
    expect(last).toMatchObject({
      id: (messages.at(-1) as Message).id,
      role: 'user',
      content: [
        { type: 'text', text: 'Now summarize the plan.' },
        { type: 'text', text: LONG_COMPACTION_INSTRUCTION },
      ],
    })
    expect(regionCoverage(messages, request)).toBe(1)
  })

  it('after a tool result (which carries only that result) sends the instruction as its own last user message', async () => {
    const messages = region()
    const request = await build(LongInstructionCompactionEngine, messages)
    expect(request.messages.slice(0, -1)).toEqual(messages)
    expect(request.messages.at(-1)).toMatchObject({
      role: 'user',
      content: [{ type: 'text', text: LONG_COMPACTION_INSTRUCTION }],
    })
  })
})

describe('the new strategies in the scripted workload', () => {
  it.each(['transcript', 'toolless', 'long-instruction'] as const)(
    '%s completes with the documented summary request shape',
    async (strategy) => {
      const run = await runWorkload({ window: 32000, steps: 30, strategy })
      expect(run.completed).toBe(true)
      expect(run.summaryCalls.length).toBeGreaterThanOrEqual(1)
      expect(run.summaryCoverage).toHaveLength(run.summaryCalls.length)
      const conversation = run.requests.find((request) => request.purpose === 'conversation') as GenerateOptions
      const summary = run.requests.find((request) => request.purpose === 'compaction') as GenerateOptions
      const text = ((summary.messages.at(-1) as Message).content.at(-1) as { text: string }).text
      if (strategy === 'transcript') {
        expect(summary).toMatchObject({ system: TRANSCRIPT_SUMMARIZER_SYSTEM, messages: [{ role: 'user' }] })
        expect(summary.tools).toBeUndefined()
        // The first tool result (2,400 characters at this window) is cut to its first 2,000.
        expect(text).toContain(
          `(tool result) ${fillerText(5000, 2000)}\n[… ${run.workload.resultChars - 2000} more characters truncated]`,
        )
        expect(run.workload.resultChars).toBeGreaterThan(2000)
        for (const coverage of run.summaryCoverage) expect(coverage).toBeLessThan(1)
      } else {
        expect(summary.system).toBe(conversation.system)
        expect(summary.tools).toEqual(strategy === 'toolless' ? undefined : conversation.tools)
        expect(text).toBe(strategy === 'toolless' ? COMPACTION_INSTRUCTION : LONG_COMPACTION_INSTRUCTION)
        expect(run.summaryCoverage.every((coverage) => coverage === 1)).toBe(true)
      }
    },
  )

  it('legacy is measured against the region before its own prune, so its coverage is below 1', async () => {
    // legacy prunes the oversized results of the region it then summarizes: the request carries
    // each pruned result's head only, which the pre-prune region shows.
    const run = await runWorkload({ window: 32000, steps: 30, strategy: 'legacy' })
    expect(run.summaryCoverage.length).toBeGreaterThanOrEqual(1)
    for (const coverage of run.summaryCoverage) expect(coverage).toBeLessThan(1)
  })

  it('warmfold replays the whole region: coverage 1 for every summary call', async () => {
    const run = await runWorkload({ window: 32000, steps: 30 })
    expect(run.summaryCoverage.length).toBeGreaterThanOrEqual(1)
    expect(run.summaryCoverage.every((coverage) => coverage === 1)).toBe(true)
  })
})
