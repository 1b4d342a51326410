import type { CompactionAuditData } from '@warmfold/compaction'
import { isCheckpointMessage } from '@warmfold/compaction'
import { textBlock, textOf, toolCallBlock } from '@warmfold/llm'
import type { GenerateOptions } from '@warmfold/llm'
import type { ScriptedReply } from '@warmfold/llm/testing'
import type { Session } from '@warmfold/session'
import { afterEach, describe, expect, it } from 'vitest'
import { parseCompactionConfig } from '../src/engine-parts.ts'
import { TRAIL_SHARE_OF_REGION } from '../src/fold/fold-auditor.ts'
import type { EngineHarness, EngineHarnessOptions } from './engine-fixture.ts'
import { elements, filler, growUntil, mountEngine, oneToolStepPerTurn, ROUTE, runAgent } from './engine-fixture.ts'

const harnesses: EngineHarness[] = []
afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.dispose()
})

/** Six reads of distinct files (the default `read` tool), one `write` call, then an answer; the summary names none of the files. */
function session(request: GenerateOptions, index: number): ScriptedReply {
  void request
  if (index < 6)
    return {
      content: [
        textBlock(`Reading. ${filler(index, 60)}`),
        toolCallBlock(`call-${index}`, 'read', `{"path":"src/feature/module-${index}.ts"}`),
      ],
    }
  if (index === 6)
    return {
      content: [
        textBlock('Saving.'),
        toolCallBlock('call-6', 'write', '{"path":"src/feature/module-0.ts","content":"x"}'),
      ],
    }
  return { content: 'Done.' }
}

const LOSSY_SUMMARY = '## Goal and Intent\n- Refactor the feature.\n## Next Step\n- Go on.'

async function foldOnce(
  options: EngineHarnessOptions,
): Promise<{ harness: EngineHarness; session: Session; audit: CompactionAuditData | undefined; checkpoint: string }> {
  const harness = await mountEngine({
    auto: false,
    conversation: session,
    summary: () => ({ content: LOSSY_SUMMARY }),
    ...options,
  } as EngineHarnessOptions)
  harnesses.push(harness)
  const agent = await runAgent(harness)
  const result = await harness.ctx.compaction.compactNow(agent)
  expect(result).not.toBeNull()
  const events = agent.session.events
  const audit = events.find((event) => event.type === 'compaction/audit')?.data as CompactionAuditData | undefined
  const message = agent.session.deriveMessages()[0]!
  expect(isCheckpointMessage(message)).toBe(true)
  harness.assertClean()
  return { harness, session: agent.session, audit, checkpoint: textOf(message.content) }
}

/** Every request, as its prompt elements, of a session that folds twice (trail on, `audit.enabled` = `audit`). */
async function requestsOfTwoFolds(audit: boolean): Promise<string[]> {
  const harness = await mountEngine({
    engine: { auto: false, audit: { enabled: audit }, artifactTrail: {} },
    conversation: oneToolStepPerTurn,
    summary: () => ({ content: LOSSY_SUMMARY }),
  })
  harnesses.push(harness)
  const agent = await runAgent(harness)
  for (let fold = 0; fold < 2; fold++) {
    await growUntil(agent, () => agent.session.deriveMessages().length >= 12)
    expect(await harness.ctx.compaction.compactNow(agent)).not.toBeNull()
  }
  await growUntil(agent, () => agent.session.deriveMessages().length >= 6)
  expect(agent.session.events.filter((event) => event.type === 'compaction/audit')).toHaveLength(audit ? 2 : 0)
  harness.assertClean()
  return harness.requests.map((request) => elements(request).join('\n'))
}

/**
 * Folds a session twice, the trail off, the first summary `first` and the second lossy. With
 * `rewrite`, the log up to the first fold is copied into a new session first, the first audit's
 * payload rewritten, and the copy folds the second time.
 */
async function foldTwice(
  first: string,
  rewrite?: (data: Record<string, unknown>) => Record<string, unknown>,
): Promise<{ agent: { session: Session }; audits: CompactionAuditData[] }> {
  const harness = await mountEngine({
    engine: { auto: false, artifactTrail: { enabled: false } },
    conversation: oneToolStepPerTurn,
    summary: (_request, call) => ({ content: call === 0 ? first : LOSSY_SUMMARY }),
  })
  harnesses.push(harness)
  let agent = await runAgent(harness)
  await growUntil(agent, () => agent.session.deriveMessages().length >= 12)
  expect(await harness.ctx.compaction.compactNow(agent)).not.toBeNull()
  if (rewrite) {
    const copy = await harness.ctx.sessions.create('copy')
    const append = copy.append as (type: string, data: unknown, ...intent: unknown[]) => unknown
    for (const event of agent.session.events) {
      const data =
        event.type === 'compaction/audit' ? rewrite(event.data as unknown as Record<string, unknown>) : event.data
      append.call(copy, event.type, data, ...(event.surface ? [event.surface] : []))
    }
    agent = await harness.ctx.agentLoop.create('copy', { ...ROUTE, system: 'You are a coding agent.' })
  }
  await growUntil(agent, () => agent.session.deriveMessages().length >= 12)
  expect(await harness.ctx.compaction.compactNow(agent)).not.toBeNull()
  harness.assertClean()
  return {
    agent,
    audits: agent.session.events
      .filter((event) => event.type === 'compaction/audit')
      .map((event) => event.data as CompactionAuditData),
  }
}

describe('the fold audit and the artifact trail in the engine', () => {
  it('appends the trail to the checkpoint and logs the audit in the fold unit: every path survives although the summary names none', async () => {
    const { session, audit, checkpoint } = await foldOnce({
      engine: { auto: false, artifactTrail: { maxTokens: 400 } },
    })
    expect(checkpoint).toContain('## Artifact Trail')
    expect(checkpoint).toContain('### Files changed\n- `src/feature/module-0.ts` (write)')
    for (let index = 1; index < 6; index++) expect(checkpoint).toContain(`- \`src/feature/module-${index}.ts\` (read)`)
    expect(audit).toBeDefined()
    expect(audit!.classes.path).toMatchObject({ seen: 6, kept: 6, keptInCheckpoint: 6 })
    expect(audit!.trail).toMatchObject({ maxTokens: 400, cut: { filesRead: 0, filesChanged: 0 } })
    expect(audit!.trail!.tokens).toBeGreaterThan(0)
    expect(audit!.trail!.tokens).toBeLessThanOrEqual(400)
    expect(audit!.health.sectionsMissing).toContain('Key Decisions')
    expect(audit!.health.truncated).toBe(false)
    // Summary, checkpoint and audit are one unit; the audit comes right after the checkpoint.
    const summary = session.events.find((event) => event.type === 'compaction/summary')!
    expect(session.events[summary.seq + 2]!.type).toBe('compaction/audit')
    expect(session.unitSizeAt(summary.seq)).toBe(3)
  })

  it('without the trail, the audit lists what the summary dropped', async () => {
    const { audit, checkpoint } = await foldOnce({ engine: { auto: false, artifactTrail: { enabled: false } } })
    expect(checkpoint).not.toContain('Artifact Trail')
    expect(audit!.trail).toBeNull()
    expect(audit!.classes.path).toMatchObject({ seen: 6, kept: 0 })
    expect(
      audit!.dropped
        .filter((item) => item.class === 'path')
        .map((item) => item.text)
        .toSorted(),
    ).toEqual([0, 1, 2, 3, 4, 5].map((index) => `src/feature/module-${index}.ts`))
    expect(
      audit!.dropped
        .filter((item) => item.class === 'path')
        .every((item) => item.origin === 'tool' && item.recoverable),
    ).toBe(true)
  })

  it('logs no audit with audit.enabled false, and the trail still lands', async () => {
    const { audit, checkpoint } = await foldOnce({
      engine: { auto: false, audit: { enabled: false }, artifactTrail: {} },
    })
    expect(audit).toBeUndefined()
    expect(checkpoint).toContain('## Artifact Trail')
  })

  it('keeps the trail to its budget, at most a quarter of what the fold replaces, and counts what it cut', async () => {
    const { audit } = await foldOnce({ engine: { auto: false, artifactTrail: { maxTokens: 70 } } })
    expect(audit!.trail!.tokens).toBeLessThanOrEqual(70)
    expect(Object.values(audit!.trail!.cut).reduce((sum, count) => sum + count, 0)).toBeGreaterThan(0)
    const summary = await foldOnce({ engine: { auto: false, artifactTrail: { maxTokens: 100_000 } } })
    const shadowed = (
      summary.session.events.find((event) => event.type === 'compaction/summary')!.data as {
        shadowedTokenCount: number
      }
    ).shadowedTokenCount
    expect(summary.audit!.trail!.maxTokens).toBe(Math.floor(shadowed * TRAIL_SHARE_OF_REGION))
  })

  it("takes the host's lines through compaction/after, and its tool annotation decides which files were changed", async () => {
    const harness = await mountEngine({
      engine: { auto: false, audit: { toolKinds: { read: 'write' } }, artifactTrail: {} },
      conversation: session,
      summary: () => ({ content: LOSSY_SUMMARY }),
    })
    harnesses.push(harness)
    harness.ctx.on('compaction/after', (context) => context.addTrailEntry?.('Branch: fix/feature (ticket FEAT-7)'))
    const agent = await runAgent(harness)
    await harness.ctx.compaction.compactNow(agent)
    const checkpoint = textOf(agent.session.deriveMessages()[0]!.content)
    expect(checkpoint).toContain('### Noted by the host\n- Branch: fix/feature (ticket FEAT-7)')
    // Declared a writer, `read` changed every file it named.
    expect(checkpoint).toContain('- `src/feature/module-3.ts` (read)')
    expect(checkpoint).not.toContain('### Files read')
    const audit = agent.session.events.find((event) => event.type === 'compaction/audit')!.data as CompactionAuditData
    expect(audit.trail!.kept).toMatchObject({ hostEntries: 1, filesChanged: 6 })
    harness.assertClean()
  })

  it('at the next fold, lists what the replaced checkpoint held of the conversation that nothing visible holds any more, from the list its audit logged', async () => {
    // `src/0.ts` is the first file the conversation reads; the summary invents the other path and the command.
    const first =
      '## Goal and Intent\n- Keep `src/legacy/api.ts` stable; the build runs `pnpm run build:legacy`.\n## Files and Code\n- Started from `src/0.ts`.\n## Next Step\n- Go on.'
    const { audits } = await foldTwice(first)
    const held = audits[0]!.heldInCheckpoint!
    expect(held).toEqual({ path: { 'src/0.ts': expect.any(Number) } })
    const mentions = held.path!['src/0.ts']!
    expect(mentions).toBeGreaterThanOrEqual(1)
    expect(audits[1]).toMatchObject({
      previousCheckpointArtifactsFrom: 'audit',
      previousCheckpointArtifacts: 1,
      vanishedTotal: 1,
    })
    expect(audits[1]!.vanishedFromPreviousCheckpoint).toEqual([{ class: 'path', text: 'src/0.ts', mentions }])
    expect(audits[0]!.previousCheckpointArtifactsFrom).toBeUndefined()

    // The same log without the list (the audit of the first fold was off, or an older log): the second fold reads the checkpoint's text.
    const { audits: fromText } = await foldTwice(first, (data) => {
      const { heldInCheckpoint: _held, ...rest } = data
      return rest
    })
    expect(fromText[1]).toMatchObject({
      previousCheckpointArtifactsFrom: 'text',
      previousCheckpointArtifacts: 3,
      vanishedTotal: 3,
    })
    expect(fromText[1]!.vanishedFromPreviousCheckpoint).toEqual([
      { class: 'command', text: 'pnpm run build:legacy', mentions: 1 },
      { class: 'path', text: 'src/0.ts', mentions: 1 },
      { class: 'path', text: 'src/legacy/api.ts', mentions: 1 },
    ])
    // A list that is not one counts as none.
    const { audits: broken } = await foldTwice(first, (data) => ({
      ...data,
      heldInCheckpoint: { path: { 'src/0.ts': 0 } },
    }))
    expect(broken[1]!.previousCheckpointArtifactsFrom).toBe('text')
  })

  it("carries the replaced checkpoint's trail into the next one, so a lossy summary cannot drop what an earlier fold recorded", async () => {
    const harness = await mountEngine({
      engine: { auto: false, artifactTrail: {} },
      conversation: oneToolStepPerTurn,
      summary: () => ({ content: LOSSY_SUMMARY }),
    })
    harnesses.push(harness)
    const agent = await runAgent(harness)
    await growUntil(agent, () => agent.session.deriveMessages().length >= 12)
    expect(await harness.ctx.compaction.compactNow(agent)).not.toBeNull()
    const first = textOf(agent.session.deriveMessages()[0]!.content)
    const firstFiles = [...first.matchAll(/^- `(src\/\d+\.ts)` \(read\)$/gm)].map((match) => match[1]!)
    expect(firstFiles.length).toBeGreaterThan(2)
    await growUntil(agent, () => agent.session.deriveMessages().length >= 12)
    expect(await harness.ctx.compaction.compactNow(agent)).not.toBeNull()
    const second = textOf(agent.session.deriveMessages()[0]!.content)
    // The summary names no file: every file of the first region is in the second trail, with the second region's.
    for (const file of firstFiles) expect(second).toContain(`- \`${file}\` (read)`)
    expect([...second.matchAll(/^- `(src\/\d+\.ts)` \(read\)$/gm)].length).toBeGreaterThan(firstFiles.length)
    const audits = agent.session.events
      .filter((event) => event.type === 'compaction/audit')
      .map((event) => event.data as CompactionAuditData)
    expect(audits.map((audit) => audit.trail!.carried)).toEqual([0, expect.any(Number)])
    expect(audits[1]!.trail!.carried).toBeGreaterThanOrEqual(firstFiles.length)
    // Nothing the first trail recorded vanished with the second fold.
    expect(audits[1]!.vanishedFromPreviousCheckpoint.filter((item) => item.class === 'path')).toEqual([])
    harness.assertClean()
  })

  it('adds nothing to the request bytes: with the audit on or off, every request of a session that folds twice is the same', async () => {
    const withAudit = await requestsOfTwoFolds(true)
    // Two summary calls and the conversation before and after them.
    expect(withAudit.length).toBeGreaterThan(10)
    expect(withAudit).toEqual(await requestsOfTwoFolds(false))
  })

  it('refuses a host line that is not one line, naming it', async () => {
    const harness = await mountEngine({
      engine: { auto: false, artifactTrail: {} },
      conversation: session,
      summary: () => ({ content: LOSSY_SUMMARY }),
    })
    harnesses.push(harness)
    harness.ctx.on('compaction/after', (context) => context.addTrailEntry?.('two\nlines'))
    const agent = await runAgent(harness)
    const error = await harness.ctx.compaction.compactNow(agent).catch((reason: unknown) => reason)
    expect((error as Error).message).toContain('addTrailEntry needs one non-empty line of text, got "two\\nlines"')
    expect(agent.session.events.some((event) => event.type === 'compaction/audit')).toBe(false)
  })
})

describe('audit and artifactTrail config', () => {
  it('fills the defaults and refuses bad values and unknown keys, naming them', () => {
    expect(parseCompactionConfig({ artifactTrail: { maxTokens: 500 }, audit: { maxDropped: 5 } })).toMatchObject({
      artifactTrail: { maxTokens: 500 },
      audit: { maxDropped: 5 },
    })
    expect(() => parseCompactionConfig({ artifactTrail: { maxTokens: 0 } })).toThrow(
      /BasicCompactionEngine config: .*maxTokens.*0/,
    )
    expect(() => parseCompactionConfig({ artifactTrail: { maxTokens: 'many' } })).toThrow(
      /BasicCompactionEngine config: .*maxTokens/,
    )
    expect(() => parseCompactionConfig({ artifactTrail: { maxToken: 5 } })).toThrow(
      'BasicCompactionEngine config: artifactTrail: unknown key "maxToken" (did you mean "maxTokens"?); known keys: enabled, maxTokens',
    )
    expect(() => parseCompactionConfig({ audit: { enable: false } })).toThrow(
      'BasicCompactionEngine config: audit: unknown key "enable" (did you mean "enabled"?)',
    )
    expect(() => parseCompactionConfig({ audit: { toolKinds: { bash: 'delete' } } })).toThrow(
      /BasicCompactionEngine config: .*toolKinds.*bash|delete/,
    )
    expect(() => parseCompactionConfig({ audit: { workspaceRoot: 'app' } })).toThrow(
      'BasicCompactionEngine config: audit.workspaceRoot must be an absolute path, got "app"',
    )
  })
})
