import { describe, expect, it } from 'vitest'
import { CHARS_PER_TOKEN, parseCacheProfile, PrefixCache, PROFILE_SYNTAX, tokensOf } from '../src/index.ts'

describe('parseCacheProfile', () => {
  it('parses every documented form', () => {
    expect(parseCacheProfile('bytes')).toEqual({ kind: 'bytes', name: 'bytes' })
    expect(parseCacheProfile('blocks:16')).toEqual({ kind: 'blocks', name: 'blocks:16', blockTokens: 16, minTokens: 0 })
    expect(parseCacheProfile('blocks:128:1024')).toEqual({ kind: 'blocks', name: 'blocks:128:1024', blockTokens: 128, minTokens: 1024 })
    expect(parseCacheProfile('blocks:1:0')).toEqual({ kind: 'blocks', name: 'blocks:1:0', blockTokens: 1, minTokens: 0 })
    expect(parseCacheProfile('anthropic')).toEqual({ kind: 'anthropic', name: 'anthropic', lookbackBlocks: 20, minTokens: 1024, ttlMs: 300_000 })
    expect(PROFILE_SYNTAX).toBe('bytes | blocks:N[:MIN] | anthropic')
  })

  it.each(['', 'Bytes', 'blocks', 'blocks:', 'blocks:0', 'blocks:-1', 'blocks:x', 'blocks:16:', 'blocks:16:1:2', 'blocks:1.5', ' bytes', 'anthropic:1h'])(
    'rejects %j with a TypeError naming the value and the accepted forms',
    (value) => {
      expect(() => parseCacheProfile(value)).toThrow(TypeError)
      expect(() => parseCacheProfile(value)).toThrow(`cache profile ${JSON.stringify(value)} is not valid; use ${PROFILE_SYNTAX} (N ≥ 1)`)
      expect(() => new PrefixCache(value)).toThrow(TypeError)
    },
  )

  it('accepts a profile object as is', () => {
    const profile = { kind: 'blocks', name: 'custom', blockTokens: 64, minTokens: 64 } as const
    expect(new PrefixCache(profile).profile).toBe(profile)
  })
})

describe('tokensOf', () => {
  it('counts 4 characters per token, rounding up', () => {
    expect(CHARS_PER_TOKEN).toBe(4)
    expect([0, 1, 3, 4, 5, 8, 4097].map(tokensOf)).toEqual([0, 1, 1, 1, 2, 2, 1025])
  })
})
