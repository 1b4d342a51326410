import { describe, expect, it } from 'vitest'
import { messageText, prefixDigests } from '../../src/prefix/index.ts'

const user = (text: string) => ({ role: 'user', content: [{ type: 'text', text }] })

describe('prefixDigests', () => {
  it('gives one digest per prefix, equal exactly while the prompts agree message for message', () => {
    const left = prefixDigests([user('a'), user('b'), user('c')])
    const right = prefixDigests([user('a'), user('b'), user('x'), user('y')])
    expect(left).toHaveLength(4)
    expect(right).toHaveLength(5)
    expect(left.slice(0, 3)).toEqual(right.slice(0, 3))
    expect(left[3]).not.toBe(right[3])
    // The seed is fixed: the AI SDK bridge stores these digests with its folds.
    expect(prefixDigests([])).toEqual(prefixDigests([]))
    expect(prefixDigests([])[0]).toMatch(/^[0-9a-f]{64}$/)
  })

  it('writes binary data as base64 and URLs as text, in the order the message was written', () => {
    const file = { type: 'file', data: new Uint8Array([104, 105]), url: new URL('https://example.com/a') }
    expect(messageText({ role: 'user', content: [file] })).toBe(
      '{"role":"user","content":[{"type":"file","data":{"base64":"aGk="},"url":"https://example.com/a"}]}',
    )
    expect(prefixDigests([{ b: 1, a: 2 }])[1]).not.toBe(prefixDigests([{ a: 2, b: 1 }])[1])
  })
})
