import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Context } from '@cordisjs/core'
import { LlmError, toolCallBlock } from '@warmfold/llm'
import { ScriptedAdapter } from '@warmfold/llm/testing'
import { mountWarmfoldHost } from '@warmfold/prefix-cache-testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cli } from './run-cli.ts'

let directory: string

/** A rough prompt size for the scripted usage. */
function prompt(request: { messages: readonly unknown[] }): number {
  return JSON.stringify(request.messages).length / 4
}

// A parent that read a file and forked twice: the first fork answered (its first request read
// only part of the parent's prefix, as the provider reports it), the second failed.
beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'warmfold-report-forks-'))
  const ctx = new Context()
  await ctx.start()
  try {
    mountWarmfoldHost(ctx, { sessions: { store: 'file', directory }, engineConfig: { auto: false } })
    ctx.tools.register({
      name: 'read',
      description: 'Read a file',
      parameters: { type: 'object' },
      execute: () => 'contents '.repeat(500),
    })
    ctx.llm.registerAdapter(
      'p',
      new ScriptedAdapter({
        models: { m: { contextWindow: 64000, defaultMaxTokens: 1000 } },
        responses: (request, index) => {
          const tokens = Math.round(prompt(request))
          if (index === 0)
            return {
              content: [toolCallBlock('call-1', 'read', '{}')],
              usage: { inputTokens: tokens, cacheReadTokens: 0, outputTokens: 10 },
            }
          if (index === 1)
            return { content: 'Read.', usage: { inputTokens: 300, cacheReadTokens: tokens - 300, outputTokens: 5 } }
          if (index === 2)
            return {
              content: 'The callers are in src/main.ts.',
              usage: { inputTokens: tokens - 20, cacheReadTokens: 20, outputTokens: 8 },
            }
          return { error: new LlmError('SERVER', 'the provider failed') }
        },
      }),
    )
    const agent = await ctx.agentLoop.create('parent', {
      provider: 'p',
      model: 'm',
      system: 'You are a coding agent.',
      maxStepRetries: 0,
    })
    await agent.followup('Read the file.')
    expect((await agent.fork({ task: 'Find the callers.' })).reason).toBe('finished')
    expect((await agent.fork({ task: 'Find the tests.' })).reason).toBe('failed')
    await ctx.sessions.closeAll()
  } finally {
    await ctx.stop()
  }
}, 60_000)

afterAll(async () => {
  await rm(directory, { recursive: true, force: true })
})

describe('warmfold report: forks', () => {
  it("a parent's report lists its child sessions with their outcome, in the text and the HTML page", async () => {
    const file = join(directory, 'parent.jsonl')
    const result = await cli(['report', file])
    expect(result.code).toBe(0)
    const section = result.stdout.split('\n\n').find((block) => block.startsWith('Forks'))!
    const lines = (await readFile(file, 'utf8'))
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { seq: number; type: string })
    const starts = lines.filter((line) => line.type === 'agent/fork-start').map((line) => line.seq + 1)
    expect(section.split('\n')).toEqual([
      'Forks (2 child session(s); report each by its id):',
      `  line ${starts[0]}, after request #2: parent.fork-1: finished: The callers are in src/main.ts.`,
      `  line ${starts[1]}, after request #2: parent.fork-2: failed: the fork's turn ended with reason error: the provider failed`,
    ])
    const out = join(directory, 'parent.html')
    expect((await cli(['report', file, '--out', out])).code).toBe(0)
    expect(await readFile(out, 'utf8')).toContain('<section id="forks"><h2>Forks (2)</h2>')
  })

  it("a fork's report names its parent, and a first request that missed the parent's prefix is a fork break", async () => {
    const result = await cli(['report', join(directory, 'parent.fork-1.jsonl')])
    expect(result.code).toBe(0)
    const [title, lineage] = result.stdout.split('\n')
    expect(title).toContain('(session parent.fork-1)')
    expect(lineage).toMatch(/^a fork of session parent \(its first request replayed the parent's log up to line \d+\)$/)
    const breaks = result.stdout.split('\n\n').find((block) => block.startsWith('Breaks'))!
    expect(breaks.split('\n')[1]).toMatch(
      /^ {2}#1 {2}line \d+ {2}conversation {2}fork {2}[\d,]+: a fork's first request did not read the parent request it replays: /,
    )
  })
})
