import { checkpointSource } from '@warmfold/compaction'
import { ArtifactExtractor } from '@warmfold/fold-audit'
import type { Message } from '@warmfold/llm'
import { createToolResultMessage, createUserMessage } from '@warmfold/llm'
import { SessionStore } from '@warmfold/session'
import { createTestContext } from '@warmfold/test-utils'
import { describe, expect, it } from 'vitest'
import { installArtifactReadAhead } from '../src/artifact-read-ahead.ts'
import { frameCheckpoint } from '../src/compaction-instruction.ts'

const nextMacrotask = () => new Promise((done) => setImmediate(done))

describe('the artifact read-ahead', () => {
  it('reads each logged message in the macrotask after the append, not inside it, so a fold only merges', async () => {
    const { ctx } = await createTestContext()
    ctx.plugin(SessionStore, {})
    const extractor = new ArtifactExtractor()
    installArtifactReadAhead(ctx, extractor, true)
    const session = await ctx.sessions.create('read-ahead')
    const asked = session.append('user/message', { message: createUserMessage('Fix src/cart.ts; never touch src/legacy.ts.') }, 'append').data.message
    const answered = session.append('tool/result', { message: createToolResultMessage('c1', "src/cart.ts(3,1): error TS2322: Type 'string' is not assignable to type 'number'.") }, 'append').data.message
    // The append returned without reading: the session's writer does not pay for it.
    expect([extractor.has(asked), extractor.has(answered)]).toEqual([false, false])
    await nextMacrotask()
    expect([extractor.has(asked), extractor.has(answered)]).toEqual([true, true])
    // What was read ahead is what a fold's extraction merges.
    const artifacts = extractor.extract([{ seq: 0, message: asked }, { seq: 1, message: answered }]).artifacts
    expect(artifacts.filter((artifact) => artifact.class === 'error').map((artifact) => artifact.text)).toEqual([expect.stringContaining('TS2322')])
    expect(artifacts.filter((artifact) => artifact.class === 'path').map((artifact) => artifact.text)).toEqual(['src/cart.ts', 'src/legacy.ts'])
    await ctx.stop()
  })

  it('reads a checkpoint\'s summary when it is logged, for the audit of the fold that will replace it, when the audit is on', async () => {
    const { ctx } = await createTestContext()
    ctx.plugin(SessionStore, {})
    const extractor = new ArtifactExtractor()
    const summaries: string[] = []
    const recording = {
      read: (message: Message) => extractor.read(message),
      readCheckpoint: (message: Message, summary: string) => {
        summaries.push(summary)
        return extractor.readCheckpoint(message, summary)
      },
      forgetLines: () => extractor.forgetLines(),
    }
    installArtifactReadAhead(ctx, recording, true)
    // An engine whose audit is off never reads a checkpoint (only the audit compares one).
    const { ctx: trailOnly } = await createTestContext()
    trailOnly.plugin(SessionStore, {})
    installArtifactReadAhead(trailOnly, recording, false)
    const trailSession = await trailOnly.sessions.create('trail-only')
    trailSession.append('user/message', { message: Object.freeze({ ...createUserMessage(frameCheckpoint('src/other.ts')), source: checkpointSource('c-0') }) }, 'append')
    await nextMacrotask()
    expect(summaries).toEqual([])
    await trailOnly.stop()
    const session = await ctx.sessions.create('checkpoint')
    const text = frameCheckpoint('## Files and Code\n- src/cart.ts')
    const checkpoint = session.append('user/message', { message: Object.freeze({ ...createUserMessage(text), source: checkpointSource('c-1') }) }, 'append').data.message
    session.append('user/message', { message: createUserMessage(text) }, 'append')
    expect(summaries).toEqual([])
    await nextMacrotask()
    // Only the checkpoint, by its summary (the frame and the preamble off); the user's copy of its text is a message like any other.
    expect(summaries).toEqual(['## Files and Code\n- src/cart.ts'])
    expect(extractor.readCheckpoint(checkpoint, summaries[0]!).map((artifact) => artifact.text)).toEqual(['src/cart.ts'])
    await ctx.stop()
  })

  it('forgets the scanned lines when a session closes (they may hold its texts), keeping what other messages read', async () => {
    const { ctx } = await createTestContext()
    ctx.plugin(SessionStore, {})
    const extractor = new ArtifactExtractor()
    let forgotten = 0
    installArtifactReadAhead(ctx, { read: (message) => extractor.read(message), readCheckpoint: (message, summary) => extractor.readCheckpoint(message, summary), forgetLines: () => void forgotten++ }, true)
    const session = await ctx.sessions.create('closing')
    const asked = session.append('user/message', { message: createUserMessage('Run pnpm test.') }, 'append').data.message
    await nextMacrotask()
    expect(forgotten).toBe(0)
    await ctx.sessions.close(session)
    expect(forgotten).toBe(1)
    expect(extractor.has(asked)).toBe(true)
    await ctx.stop()
  })

  it('stops reading when the engine is disposed: a message logged after that is left for a fold to read', async () => {
    const { ctx } = await createTestContext()
    ctx.plugin(SessionStore, {})
    const extractor = new ArtifactExtractor()
    const scope = ctx.plugin((engine) => installArtifactReadAhead(engine, extractor, true))
    const session = await ctx.sessions.create('disposed')
    scope.dispose()
    const late = session.append('user/message', { message: createUserMessage('Run pnpm test.') }, 'append').data.message
    await nextMacrotask()
    expect(extractor.has(late)).toBe(false)
    await ctx.stop()
  })
})
