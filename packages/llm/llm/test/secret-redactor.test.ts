import { inspect } from 'node:util'
import { describe, expect, it } from 'vitest'
import { normalizeApiKey, REDACTED, secretRedactor } from '../src/secret-redactor.ts'

const KEY = 'sk-live-0123456789abcdef'

describe('secretRedactor', () => {
  const redact = secretRedactor(KEY)

  it('replaces every occurrence in text, keeping the rest', () => {
    expect(redact.text(`Bearer ${KEY} and again ${KEY}.`)).toBe(`Bearer ${REDACTED} and again ${REDACTED}.`)
    expect(redact.text('nothing here')).toBe('nothing here')
  })

  it('redacts every string and key of a JSON value, and returns the value itself when nothing held the key', () => {
    const raw = { input_tokens: 3, note: `billed to ${KEY}`, nested: [{ [KEY]: 1 }, 'plain'], untouched: { a: 1 } }
    const redacted = redact.value(raw)
    expect(redacted).toEqual({
      input_tokens: 3,
      note: `billed to ${REDACTED}`,
      nested: [{ [REDACTED]: 1 }, 'plain'],
      untouched: { a: 1 },
    })
    expect(redacted.untouched).toBe(raw.untouched)
    expect(raw.note).toContain(KEY)
    const clean = { input_tokens: 3, nested: [1, 2] }
    expect(redact.value(clean)).toBe(clean)
  })

  it('copies an error chain that holds the key (message, stack, cause, code), and keeps an error without it', () => {
    const inner = Object.assign(new Error(`header ${KEY} rejected`), { code: 'ERR_INVALID' })
    const outer = new TypeError('fetch failed', { cause: inner })
    const copy = redact.error(outer) as Error & { cause: Error & { code: string } }
    const rendered = inspect(copy, { depth: Infinity }) + String(copy.stack) + String(copy.cause.stack)
    expect(rendered).not.toContain(KEY)
    expect(copy).toMatchObject({ name: 'TypeError', message: 'fetch failed' })
    expect(copy.cause).toMatchObject({ message: `header ${REDACTED} rejected`, code: 'ERR_INVALID' })
    const clean = new Error('connection refused')
    expect(redact.error(clean)).toBe(clean)
    expect(redact.error(`thrown ${KEY}`)).toBe(`thrown ${REDACTED}`)
    expect(
      JSON.stringify(
        redact.error(
          new (class Detail {
            readonly key = KEY
          })(),
        ),
      ),
    ).not.toContain(KEY)
  })

  it('without a secret, every method returns its input', () => {
    const none = secretRedactor(undefined)
    const value = { note: KEY }
    expect(none.text(KEY)).toBe(KEY)
    expect(none.value(value)).toBe(value)
  })
})

describe('normalizeApiKey', () => {
  it.each([`${KEY}\n`, `${KEY}\r\n`, `  ${KEY}  `, `\t${KEY}\r\n  `])('trims %j', (value) => {
    expect(normalizeApiKey(value, 'apiKey')).toBe(KEY)
  })

  it.each(['', '   ', '\r\n', '\t \n'])('rejects %j as empty, naming the source', (value) => {
    expect(() => normalizeApiKey(value, 'the environment variable MY_KEY (apiKeyEnv)')).toThrow(
      /^the environment variable MY_KEY \(apiKeyEnv\) is empty after trimming whitespace/,
    )
  })

  it.each(['sk-a b', 'sk-a\nb', 'sk-a\u0000b', 'sk-a\u007fb'])(
    'rejects whitespace or a control character inside %j without quoting the key',
    (value) => {
      let message = ''
      try {
        normalizeApiKey(value, 'Adapter config: apiKey')
      } catch (error) {
        message = (error as Error).message
      }
      expect(message).toMatch(/^Adapter config: apiKey has whitespace or a control character inside the key/)
      expect(message).not.toContain('sk-a')
    },
  )
})
