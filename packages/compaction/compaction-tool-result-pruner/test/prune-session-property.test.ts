import { checkCompactionEvent } from '@warmfold/compaction'
import type { ToolResultContent, ToolResultMessage } from '@warmfold/llm'
import {
  canonicalJson,
  createAssistantMessage,
  createToolResultMessage,
  createUserMessage,
  textBlock,
  toolCallBlock,
} from '@warmfold/llm'
import { Session } from '@warmfold/session'
import type { TestContext } from '@warmfold/test-utils'
import { createTestContext } from '@warmfold/test-utils'
import { TokenMeter } from '@warmfold/token-meter'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ToolResultPruner } from '../src/index.ts'
import { contents, isWellFormed, measureContent } from './pruner-fixtures.ts'

const CONFIG: ToolResultPruner.Config = { thresholdChars: 100, headChars: 20, tailChars: 10 }

let context: TestContext
beforeAll(async () => {
  context = await createTestContext()
  context.ctx.plugin(TokenMeter, {})
  context.ctx.plugin(ToolResultPruner, CONFIG)
})
afterAll(async () => {
  context.assertClean()
  await context.dispose()
})

/** A session of tool calls with random results, checked by the compaction invariant rules. */
function guardedSession(results: readonly ToolResultContent[][]): Session {
  const session = new Session('property')
  let state = {}
  session.addValidator((candidate) => {
    state = checkCompactionEvent(state, candidate)
  })
  session.append('user/message', { message: createUserMessage('go', 'u') }, 'append')
  for (const [index, content] of results.entries()) {
    session.append(
      'assistant/message',
      {
        message: createAssistantMessage(
          [toolCallBlock(`c${index}`, 'read', '{}')],
          { provider: 'p', model: 'm' },
          `a${index}`,
        ),
      },
      'append',
    )
    const message = createToolResultMessage(`c${index}`, content.length ? content : [textBlock('')], {
      id: `r${index}`,
    })
    session.append('tool/result', { message, toolName: 'read', step: index }, 'append')
  }
  return session
}

describe('pruneSession properties', () => {
  it('rewrites exactly the included over-budget results in place and converges', () => {
    fc.assert(
      fc.property(
        fc.array(contents(240), { maxLength: 8 }),
        fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }),
        (results, picks) => {
          const pruner = context.ctx.toolResultPruner
          const session = guardedSession(results)
          const nodes = [...session.surface.nodes]
          const messages = session.deriveMessages().map((message) => canonicalJson(message))
          const length = session.length
          const include = new Set(nodes.filter((_, position) => picks[position % picks.length]))

          const plan = pruner.planSession(session, include)
          expect(session.length).toBe(length)
          const result = pruner.pruneSession(session, include)

          expect(result.entries.map((entry) => entry.seq)).toEqual(plan.map((entry) => entry.seq))
          expect(session.length).toBe(length + 2 * plan.length)
          const rewritten = new Map(result.entries.map((entry) => [entry.position, entry]))
          expect(session.surface.nodes).toHaveLength(nodes.length)
          for (const [position, seq] of nodes.entries()) {
            const entry = rewritten.get(position)
            const message = session.deriveMessages()[position]!
            if (!entry) {
              expect(session.surface.nodes[position]).toBe(seq)
              expect(canonicalJson(message)).toBe(messages[position])
              continue
            }
            expect(include.has(seq)).toBe(true)
            expect(entry.replacementSeq).toBe(entry.pruneSeq + 1)
            expect(session.eventAt(entry.pruneSeq)?.type).toBe('compaction/prune')
            expect(session.surface.nodes[position]).toBe(entry.replacementSeq)
            const blocks = (message as ToolResultMessage).content[0].content
            expect(measureContent(blocks)).toBeLessThanOrEqual(CONFIG.thresholdChars)
            for (const block of blocks) if (block.type === 'text') expect(isWellFormed(block.text)).toBe(true)
          }
          // Included results left alone were within budget; a second pass changes nothing.
          expect(pruner.planSession(session, include)).toEqual([])
          const settled = session.length
          expect(pruner.pruneSession(session, include).entries).toEqual([])
          expect(session.length).toBe(settled)
        },
      ),
      { numRuns: 150 },
    )
  })
})
