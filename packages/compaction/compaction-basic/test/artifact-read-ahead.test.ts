import { checkpointSource } from '@warmfold/compaction'
import { ArtifactExtractor } from '@warmfold/fold-audit'
import type { Message } from '@warmfold/llm'
import { createToolResultMessage, createUserMessage } from '@warmfold/llm'
import { SessionStore } from '@warmfold/session'
import { createTestContext } from '@warmfold/test-utils'
import { describe, expect, it } from 'vitest'
import { installArtifactReadAhead } from '../src/fold/artifact-read-ahead.ts'
import { frameCheckpoint } from '../src/fold/compaction-instruction.ts'

const nextMacrotask = () => new Promise((done) => setImmediate(done))

describe('the artifact read-ahead', () => {
  it('reads each logged message in the macrotask after the append, not inside it, so a fold only merges', async () => {
    const { ctx } = await createTestContext()
    ctx.plugin(SessionStore, {})
    const extractor = new ArtifactExtractor()
    installArtifactReadAhead(ctx, extractor)
    const session = await ctx.sessions.create('read-ahead')
    const asked = session.append(
      'user/message',
      { message: createUserMessage('Fix src/cart.ts; never touch src/legacy.ts.') },
      'append',
    ).data.message
    const answered = session.append(
      'tool/result',
      {
        message: createToolResultMessage(
          'c1',
          "src/cart.ts(3,1): error TS2322: Type 'string' is not assignable to type 'number'.",
        ),
      },
      'append',
    ).data.message
    // The append returned without reading: the session's writer does not pay for it.
    expect([extractor.has(asked), extractor.has(answered)]).toEqual([false, false])
    await nextMacrotask()
    expect([extractor.has(asked), extractor.has(answered)]).toEqual([true, true])
    // What was read ahead is what a fold's extraction merges.
    const artifacts = extractor.extract([
      { seq: 0, message: asked },
      { seq: 1, message: answered },
    ]).artifacts
    expect(artifacts.filter((artifact) => artifact.class === 'error').map((artifact) => artifact.text)).toEqual([
      expect.stringContaining('TS2322'),
    ])
    expect(artifacts.filter((artifact) => artifact.class === 'path').map((artifact) => artifact.text)).toEqual([
      'src/cart.ts',
      'src/legacy.ts',
    ])
    await ctx.stop()
  })

  it('does not read a checkpoint: extraction leaves it out, and the next fold compares what its audit logged', async () => {
    const { ctx } = await createTestContext()
    ctx.plugin(SessionStore, {})
    const extractor = new ArtifactExtractor()
    const read: Message[] = []
    installArtifactReadAhead(ctx, {
      read: (message: Message) => void read.push(message),
      forgetLines: () => extractor.forgetLines(),
    })
    const session = await ctx.sessions.create('checkpoint')
    const text = frameCheckpoint('## Files and Code\n- src/cart.ts')
    session.append(
      'user/message',
      { message: Object.freeze({ ...createUserMessage(text), source: checkpointSource('c-1') }) },
      'append',
    )
    const copy = session.append('user/message', { message: createUserMessage(text) }, 'append').data.message
    await nextMacrotask()
    // The user's copy of its text is a message like any other.
    expect(read).toEqual([copy])
    await ctx.stop()
  })

  it('forgets the scanned lines when a session closes (they may hold its texts), keeping what other messages read', async () => {
    const { ctx } = await createTestContext()
    ctx.plugin(SessionStore, {})
    const extractor = new ArtifactExtractor()
    let forgotten = 0
    installArtifactReadAhead(ctx, { read: (message) => extractor.read(message), forgetLines: () => void forgotten++ })
    const session = await ctx.sessions.create('closing')
    const asked = session.append('user/message', { message: createUserMessage('Run pnpm test.') }, 'append').data
      .message
    await nextMacrotask()
    expect(forgotten).toBe(0)
    await ctx.sessions.close(session)
    expect(forgotten).toBe(1)
    expect(extractor.has(asked)).toBe(true)
    await ctx.stop()
  })

  it('reports a reading that throws as a warning naming the message, and goes on reading the next ones', async () => {
    const { ctx, assertClean } = await createTestContext()
    ctx.plugin(SessionStore, {})
    const read: Message[] = []
    installArtifactReadAhead(ctx, {
      read: (message: Message) => {
        if (read.push(message) === 1) throw new RangeError('Maximum call stack size exceeded')
      },
      forgetLines: () => undefined,
    })
    const session = await ctx.sessions.create('throwing')
    for (const text of ['First.', 'Second.'])
      session.append('user/message', { message: createUserMessage(text) }, 'append')
    // Thrown from the macrotask, the error would be uncaught and end the process.
    await nextMacrotask()
    expect(read).toHaveLength(2)
    expect(assertClean).toThrow(
      'fold audit: reading message 0 of session throwing ahead failed: Maximum call stack size exceeded',
    )
    await ctx.stop()
  })

  it('stops reading when the engine is disposed: a message logged after that is left for a fold to read', async () => {
    const { ctx } = await createTestContext()
    ctx.plugin(SessionStore, {})
    const extractor = new ArtifactExtractor()
    const scope = ctx.plugin((engine) => installArtifactReadAhead(engine, extractor))
    const session = await ctx.sessions.create('disposed')
    scope.dispose()
    const late = session.append('user/message', { message: createUserMessage('Run pnpm test.') }, 'append').data.message
    await nextMacrotask()
    expect(extractor.has(late)).toBe(false)
    await ctx.stop()
  })
})
