import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { REQUEST_APIS } from '@warmfold/cache-ledger/prefix'
import { WarmSummaryPlanner } from '../src/index.ts'
import { holding, inbound, remembered } from './warm-support.ts'

const KEYS = [
  'messages',
  'input',
  'contents',
  'system',
  'instructions',
  'systemInstruction',
  'tools',
  'model',
  'tool_choice',
]
const SUMMARIZER =
  'You are a helpful AI assistant tasked with summarizing conversations. You are a context summarization agent.'
const body = fc.dictionary(fc.constantFrom(...KEYS), fc.oneof(fc.jsonValue(), fc.constant(SUMMARIZER)), { maxKeys: 6 })
const message = fc.record({
  role: fc.constantFrom('user', 'system', 'assistant', 'tool', 'model', 7),
  content: fc.oneof(fc.jsonValue(), fc.constant(`<conversation>x</conversation> ${SUMMARIZER}`)),
  parts: fc.jsonValue(),
})
const shaped = fc.record({
  system: fc.constant(SUMMARIZER),
  messages: fc.array(message, { maxLength: 4 }),
  contents: fc.array(message, { maxLength: 4 }),
  input: fc.array(message, { maxLength: 4 }),
})

describe('warm summaries: hostile bodies', () => {
  it('plans any JSON body of any API without throwing', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...REQUEST_APIS),
        fc.oneof(body, shaped),
        fc.oneof(body, shaped),
        (api, json, held) => {
          const plan = new WarmSummaryPlanner().plan(inbound(api, json, 1_000), json, holding(remembered(api, held, 0)))
          expect(['forward', 'rewrite']).toContain(plan.action)
        },
      ),
      { numRuns: 400 },
    )
  })

  it('rewrites a known summary request over a conversation of odd messages without throwing', () => {
    const QWEN = 'You are the component that summarizes a conversation when its context window is about to overflow.'
    fc.assert(
      fc.property(fc.array(fc.jsonValue(), { maxLength: 6 }), fc.jsonValue(), (messages, tools) => {
        const held = { model: 'm', messages, tools }
        const summary = {
          model: 'm',
          messages: [{ role: 'system', content: QWEN }, ...messages, { role: 'user', content: 'go' }],
        }
        const plan = new WarmSummaryPlanner().plan(
          inbound('openai-chat', summary, 1_000),
          summary,
          holding(remembered('openai-chat', held, 0)),
        )
        if (plan.action === 'rewrite')
          expect(JSON.parse(plan.body.toString()).messages.slice(0, messages.length)).toEqual(
            JSON.parse(JSON.stringify(messages)),
          )
      }),
      { numRuns: 200 },
    )
  })
})
