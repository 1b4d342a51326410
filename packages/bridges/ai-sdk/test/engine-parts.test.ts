import type { SummaryAttempt } from '@warmfold/compaction'
import type { SummaryTransport } from '@warmfold/compaction-basic/engine-parts'
import { CompactionRefusal, runSummaryCalls } from '@warmfold/compaction-basic/engine-parts'
import type { GenerateResult } from '@warmfold/llm'
import { generateText, jsonSchema, stepCountIs, tool, wrapLanguageModel } from 'ai'
import { afterEach, describe, expect, it } from 'vitest'
import type { FoldReport, WarmfoldMiddlewareOptions } from '../src/index.ts'
import { warmfoldMiddleware } from '../src/index.ts'
import type { ScriptedOptions } from './scripted-provider.ts'
import { ScriptedProvider } from './scripted-provider.ts'

const readTool = tool({
  description: 'Read a file',
  inputSchema: jsonSchema<{ path: string }>({
    type: 'object',
    properties: { path: { type: 'string' } },
    required: ['path'],
  }),
  execute: async ({ path }) => `// ${path}\n${'export const value = 1\n'.repeat(60)}`,
})

let provider: ScriptedProvider | undefined
afterEach(async () => {
  await provider?.close()
  provider = undefined
})

async function session(scripted: ScriptedOptions, options: WarmfoldMiddlewareOptions = {}, steps = 12) {
  provider = await ScriptedProvider.start('openai-compatible', steps, scripted)
  const folds: FoldReport[] = []
  const model = wrapLanguageModel({
    model: provider.model(),
    middleware: warmfoldMiddleware({
      contextWindow: 6_000,
      maxTokens: 50,
      onFold: (fold) => folds.push(fold),
      ...options,
    }),
  })
  const result = await generateText({
    model,
    system: 'You are a coding agent.',
    prompt: 'Read the files.',
    tools: { read_file: readTool },
    stopWhen: stepCountIs(steps + 2),
  })
  return { result, folds, provider }
}

/** The attempts without their usage (the scripted server's usage is not the hand-driven loop's). */
function shape(attempts: readonly SummaryAttempt[]) {
  return attempts.map(({ reason, maxTokens, finishReason }) => ({ reason, maxTokens, finishReason }))
}

/** The text of the checkpoint message in the first conversation request after the first summary call. */
function checkpointAfterFirstFold(scripted: ScriptedProvider): string {
  const after = scripted.requests.findIndex((request) => request.summary) + 1
  const messages = scripted.requests[after]!.recorded.json.messages as Array<{ role: string; content: unknown }>
  const checkpoint = messages.find((message) => String(message.content).includes('<compacted-summary>'))
  return String(checkpoint?.content)
}

describe("the engine's parts in the middleware", { timeout: 30_000 }, () => {
  it("every committed fold is audited by the engine's FoldAuditor and its checkpoint carries the artifact trail", async () => {
    const { result, folds, provider: scripted } = await session({}, {}, 30)
    expect(result.text).toBe('done')
    expect(folds.length).toBeGreaterThanOrEqual(2)
    for (const fold of folds) {
      expect(fold.committed).toBe(true)
      // The summary's health against the engine's instruction sections.
      expect(fold.audit?.health.sectionsPresent).toEqual(['Goal and Intent', 'Current Work'])
      expect(fold.audit?.health.sectionsMissing).toContain('Next Step')
      expect(fold.audit?.trail?.kept.filesRead).toBeGreaterThan(0)
    }
    // The first fold folded the first reads: their paths are artifacts the checkpoint holds.
    expect(folds[0]!.audit!.classes.path).toMatchObject({ seen: expect.any(Number) })
    expect(Object.keys(folds[0]!.audit!.heldInCheckpoint?.path ?? {})).toContain('file-0.ts')
    // The second fold replaces the first checkpoint: its artifacts are compared, and its trail carried on.
    expect(folds[1]!.audit!.previousCheckpointArtifacts).toBeGreaterThan(0)
    expect(folds[1]!.audit!.previousCheckpointArtifactsFrom).toBe('text')
    const text = checkpointAfterFirstFold(scripted)
    expect(text).toContain('## Artifact Trail')
    expect(text).toContain('- `file-0.ts` (read_file)')
  })

  it('audit and artifactTrail are the engine keys: disabled, no audit and no trail', async () => {
    const { folds, provider: scripted } = await session(
      {},
      { audit: { enabled: false }, artifactTrail: { enabled: false } },
    )
    expect(folds.length).toBeGreaterThan(0)
    expect(folds.every((fold) => fold.committed && fold.audit === undefined)).toBe(true)
    expect(checkpointAfterFirstFold(scripted)).not.toContain('## Artifact Trail')
    expect(() =>
      warmfoldMiddleware({ contextWindow: 6_000, audit: { toolKinds: { read_file: 'look' as 'read' } } }),
    ).toThrow("warmfoldMiddleware options: audit.toolKinds.read_file must be 'read', 'write' or 'other', got \"look\"")
  })

  it("a fold's summary calls are the engine's summary loop: the same attempts and the same refusal for the same answers", async () => {
    const { folds } = await session({ summaryReplies: ['tool-call', 'truncated', 'truncated', 'truncated'] })
    const refused = folds[0]!
    expect(refused.committed).toBe(false)
    // The engine's loop, driven by hand with the answers the scripted server gave.
    const answers: GenerateResult[] = [
      { content: [{ type: 'tool-call', id: 'call', name: 'read_file', arguments: '{}' }], finishReason: 'tool-calls' },
      ...Array.from({ length: 3 }, (): GenerateResult => ({
        content: [{ type: 'text', text: '## Goal and Intent\n- read' }],
        finishReason: 'max-tokens',
      })),
    ]
    const transport: SummaryTransport<{ maxTokens: number }> = {
      send: async () => answers.shift()!,
      settings: (request) => ({ maxTokens: request.maxTokens }),
      next: (_request, step) => ({ maxTokens: step.maxTokens }),
      target: () => 'scripted/scripted-model',
    }
    const attempts: SummaryAttempt[] = []
    const budget = { retries: 2, growth: 2, ceilingTokens: 4_000, deadlineMs: 0 }
    const engine = await runSummaryCalls(transport, { maxTokens: 50 }, budget, { attempts }).catch((error) => error)
    expect(engine).toBeInstanceOf(CompactionRefusal)
    expect(shape(refused.attempts)).toEqual(shape(attempts))
    expect(refused.refusal).toBe((engine as CompactionRefusal).message)
  })

  it("a checkpoint no smaller than what it replaces is refused by the engine's check", async () => {
    const { result, folds } = await session({ summaryText: `${'- a line the summary should not hold\n'.repeat(400)}` })
    expect(result.text).toBe('done')
    expect(folds.length).toBeGreaterThan(0)
    for (const fold of folds) {
      expect(fold.committed).toBe(false)
      expect(fold.refusal).toMatch(
        /^checkpoint \(\d+ tokens\) is not smaller than what it replaces \(\d+ tokens\); no checkpoint was committed$/,
      )
      expect(fold.attempts).toHaveLength(1)
    }
  })

  it('a summary call past summaryDeadlineMs is abandoned by the loop, with its attempt on record', async () => {
    let release!: () => void
    const held = new Promise<void>((resolve) => (release = resolve))
    try {
      const { result, folds } = await session({ holdSummaries: held }, { summaryDeadlineMs: 50 })
      expect(result.text).toBe('done')
      expect(folds[0]).toMatchObject({ committed: false, trigger: 'pressure' })
      expect(folds[0]!.refusal).toBe(
        'summary call did not finish within summaryDeadlineMs (50 ms); no checkpoint was committed',
      )
      expect(folds[0]!.attempts).toEqual([{ reason: 'first', maxTokens: 50, finishReason: 'error' }])
    } finally {
      release()
    }
  })
})
