import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { GenerateOptions } from '@warmfold/llm'
import { textBlock, toolCallBlock } from '@warmfold/llm'
import type { ScriptedReply } from '@warmfold/llm/testing'
import type { Session } from '@warmfold/session'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { EngineHarness } from './engine-fixture.ts'
import { filler, growUntil, mountEngine, ROUTE } from './engine-fixture.ts'

/** Tool-call arguments nested deeper than a recursive walk of the parsed JSON survives (20 KB). */
const DEPTH = 10_000
const deepArguments = (path: string): string => `{"path":"${path}","content":${'['.repeat(DEPTH)}${']'.repeat(DEPTH)}}`
/** The 32k-window model: one such call is about 5,000 tokens. */
const OPTIONS = { ...ROUTE, model: 'other', system: 'You are a coding agent.' }

/** Every third step writes a file with deeply nested arguments; the others read a file. */
function deepCalls(request: GenerateOptions, index: number): ScriptedReply {
  void request
  if (index % 2 === 1) return { content: `Done with step ${index}.` }
  const call =
    index % 3 === 0
      ? toolCallBlock(`call-${index}`, 'write', deepArguments(`src/deep-${index}.ts`))
      : toolCallBlock(`call-${index}`, 'read', `{"path":"src/${index}.ts"}`)
  return { content: [textBlock(`Step ${index}. ${filler(index, 60)}`), call] }
}

const audits = (session: Session) => session.events.filter((event) => event.type === 'compaction/audit').length

let directory: string
const harnesses: EngineHarness[] = []
beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'warmfold-deep-arguments-'))
})
afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.dispose()
  await rm(directory, { recursive: true, force: true })
})

async function host(): Promise<EngineHarness> {
  const harness = await mountEngine({ directory, engine: { auto: false }, conversation: deepCalls })
  harnesses.push(harness)
  return harness
}

describe('tool calls whose JSON arguments nest 10,000 levels', () => {
  it('neither crash the host (read ahead) nor fail a fold, before and after a restart over the JSONL store', async () => {
    const first = await host()
    const agent = await first.ctx.agentLoop.create('deep', OPTIONS)
    await growUntil(agent, () => agent.session.deriveMessages().length >= 14)
    // The read-ahead reads each logged message in the next macrotask; an exception there is uncaught.
    await new Promise((done) => setImmediate(done))
    expect(await first.ctx.compaction.compactNow(agent)).not.toBeNull()
    expect(audits(agent.session)).toBe(1)
    await growUntil(agent, () => agent.session.deriveMessages().length >= 10)
    await first.ctx.sessions.flush(agent.session)
    first.assertClean()
    harnesses.splice(harnesses.indexOf(first), 1)
    await first.dispose()

    // A fresh host on the same folder reads the restored messages at its first fold, not ahead.
    const second = await host()
    const resumed = await second.ctx.agentLoop.create('deep', OPTIONS)
    expect(audits(resumed.session)).toBe(1)
    expect(await second.ctx.compaction.compactNow(resumed)).not.toBeNull()
    await growUntil(resumed, () => resumed.session.deriveMessages().length >= 10)
    await new Promise((done) => setImmediate(done))
    expect(await second.ctx.compaction.compactNow(resumed)).not.toBeNull()
    expect(audits(resumed.session)).toBe(3)
    second.assertClean()
  })
})
