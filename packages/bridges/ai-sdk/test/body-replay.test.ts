import { describe, expect, it } from 'vitest'
import { compareBodies } from '../src/index.ts'

const previous = {
  model: 'm',
  temperature: 0.2,
  max_tokens: 4096,
  messages: [
    { role: 'system', content: 'S' },
    { role: 'user', content: [{ type: 'text', text: 'A' }] },
  ],
  tools: [{ name: 't' }],
}

describe('compareBodies', () => {
  it('a replay: one appended message, the output cap aside', () => {
    expect(
      compareBodies(previous, {
        ...previous,
        max_tokens: 512,
        messages: [...previous.messages, { role: 'user', content: 'I' }],
      }),
    ).toEqual({ replay: true, appendedAt: '$.messages[2]' })
  })

  it('a replay the provider merged into the last user message (Anthropic joins adjacent user turns)', () => {
    const merged = {
      ...previous,
      messages: [
        previous.messages[0],
        {
          role: 'user',
          content: [
            { type: 'text', text: 'A' },
            { type: 'text', text: 'I' },
          ],
        },
      ],
    }
    expect(compareBodies(previous, merged)).toEqual({ replay: true, appendedAt: '$.messages[1].content[1]' })
  })

  it('names the first differing path: a changed setting, a rewritten message, a dropped tool, two appended messages', () => {
    const appended = [...previous.messages, { role: 'user', content: 'I' }]
    expect(compareBodies(previous, { ...previous, temperature: 0.7, messages: appended })).toEqual({
      replay: false,
      firstDifferingPath: '$.temperature',
    })
    expect(
      compareBodies(previous, {
        ...previous,
        messages: [previous.messages[0], { role: 'user', content: [{ type: 'text', text: 'B' }] }, appended[2]],
      }),
    ).toEqual({ replay: false, firstDifferingPath: '$.messages[1].content[0].text' })
    expect(compareBodies(previous, { ...previous, messages: appended, tools: [] })).toEqual({
      replay: false,
      firstDifferingPath: '$.tools[0]',
    })
    expect(compareBodies(previous, { ...previous, messages: [...appended, { role: 'user', content: 'J' }] })).toEqual({
      replay: false,
      firstDifferingPath: '$.messages[2]',
    })
  })
})
