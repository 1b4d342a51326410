import type { CompactionAuditData } from '@warmfold/compaction'
import { isCheckpointMessage } from '@warmfold/compaction'
import type { GenerateOptions } from '@warmfold/llm'
import { textBlock, textOf, toolCallBlock } from '@warmfold/llm'
import type { ScriptedReply } from '@warmfold/llm/testing'
import { afterEach, describe, expect, it } from 'vitest'
import type { EngineHarness } from './engine-fixture.ts'
import { filler, mountEngine, runAgent } from './engine-fixture.ts'

const harnesses: EngineHarness[] = []
afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.dispose()
})

/** The file the region reads and only the answer after the region names again. */
const ONLY_PATH = 'src/billing/only-here.ts'

/** Reads `ONLY_PATH` and three other files, then answers naming `ONLY_PATH` (the newest unit: kept by a fold). */
function conversation(request: GenerateOptions, index: number): ScriptedReply {
  void request
  if (index < 4)
    return {
      content: [
        textBlock(`Reading. ${filler(index, 60)}`),
        toolCallBlock(`call-${index}`, 'read', `{"path":"${index === 0 ? ONLY_PATH : `src/other/file-${index}.ts`}"}`),
      ],
    }
  return { content: `The rounding fix belongs in ${ONLY_PATH}.` }
}

describe('the fold audit and the messages a fold keeps', () => {
  it('counts a region item as kept when only the first message after the checkpoint names it again', async () => {
    const harness = await mountEngine({
      engine: {
        auto: false,
        // Nothing writes the path into the checkpoint, and no user message is carried before the answer.
        artifactTrail: { enabled: false },
        keepUserMessages: { maxTokens: 1 },
      },
      conversation,
      summary: () => ({ content: '## Goal and Intent\n- Fix the rounding.\n## Next Step\n- Go on.' }),
    })
    harnesses.push(harness)
    const agent = await runAgent(harness)
    expect(await harness.ctx.compaction.compactNow(agent)).not.toBeNull()
    const messages = agent.session.deriveMessages()
    // The checkpoint, then the answer: the first (and only) message the fold kept, the one place the path is left.
    expect(messages).toHaveLength(2)
    expect(isCheckpointMessage(messages[0]!)).toBe(true)
    expect(textOf(messages[0]!.content)).not.toContain(ONLY_PATH)
    expect(textOf(messages[1]!.content)).toContain(ONLY_PATH)
    const audit = agent.session.events.find((event) => event.type === 'compaction/audit')!.data as CompactionAuditData
    expect(audit.dropped.map((item) => item.text)).not.toContain(ONLY_PATH)
    // Four paths read in the region, none in the checkpoint; the one named again is kept.
    expect(audit.classes.path).toMatchObject({ seen: 4, kept: 1, keptInCheckpoint: 0 })
    harness.assertClean()
  })
})
