import { describe, expect, it } from 'vitest'
import { parseCacheProfile, PrefixCache, PROFILE_SYNTAX, tokensOf } from '../src/index.ts'
import { CHARS_PER_TOKEN, wholeTokensOf } from '../src/cache-profile.ts'

const HOUR = 3_600_000

describe('parseCacheProfile', () => {
  it('parses every documented form; bytes and blocks never expire unless given a ttl', () => {
    expect(parseCacheProfile('bytes')).toEqual({ kind: 'bytes', name: 'bytes', ttlMs: Infinity })
    expect(parseCacheProfile('blocks:16')).toEqual({
      kind: 'blocks',
      name: 'blocks:16',
      blockTokens: 16,
      minTokens: 0,
      ttlMs: Infinity,
    })
    expect(parseCacheProfile('blocks:128:1024')).toEqual({
      kind: 'blocks',
      name: 'blocks:128:1024',
      blockTokens: 128,
      minTokens: 1024,
      ttlMs: Infinity,
    })
    expect(parseCacheProfile('blocks:1:0')).toEqual({
      kind: 'blocks',
      name: 'blocks:1:0',
      blockTokens: 1,
      minTokens: 0,
      ttlMs: Infinity,
    })
    expect(parseCacheProfile('anthropic')).toEqual({
      kind: 'anthropic',
      name: 'anthropic',
      lookbackBlocks: 20,
      minTokens: 1024,
      ttlMs: 300_000,
    })
    expect(parseCacheProfile('anthropic:1h')).toEqual({
      kind: 'anthropic',
      name: 'anthropic:1h',
      lookbackBlocks: 20,
      minTokens: 1024,
      ttlMs: HOUR,
    })
    expect(parseCacheProfile('deepseek')).toEqual({
      kind: 'deepseek',
      name: 'deepseek',
      unitTokens: 64,
      ttlMs: 3 * HOUR,
    })
    expect(PROFILE_SYNTAX).toBe('bytes[:ttl=S] | blocks:N[:MIN][:ttl=S] | anthropic[:1h|:ttl=S] | deepseek[:ttl=S]')
  })

  it('takes a ttl in seconds on every kind and keeps the name as given', () => {
    expect(parseCacheProfile('bytes:ttl=600')).toEqual({ kind: 'bytes', name: 'bytes:ttl=600', ttlMs: 600_000 })
    expect(parseCacheProfile('blocks:16:ttl=30')).toEqual({
      kind: 'blocks',
      name: 'blocks:16:ttl=30',
      blockTokens: 16,
      minTokens: 0,
      ttlMs: 30_000,
    })
    expect(parseCacheProfile('blocks:128:1024:ttl=600')).toEqual({
      kind: 'blocks',
      name: 'blocks:128:1024:ttl=600',
      blockTokens: 128,
      minTokens: 1024,
      ttlMs: 600_000,
    })
    expect(parseCacheProfile('anthropic:ttl=90')).toEqual({
      kind: 'anthropic',
      name: 'anthropic:ttl=90',
      lookbackBlocks: 20,
      minTokens: 1024,
      ttlMs: 90_000,
    })
    expect(parseCacheProfile('deepseek:ttl=86400')).toEqual({
      kind: 'deepseek',
      name: 'deepseek:ttl=86400',
      unitTokens: 64,
      ttlMs: 86_400_000,
    })
    expect(parseCacheProfile('bytes:ttl=0.5').ttlMs).toBe(500)
  })

  it.each([
    '',
    'Bytes',
    'blocks',
    'blocks:',
    'blocks:0',
    'blocks:-1',
    'blocks:x',
    'blocks:16:',
    'blocks:16:1:2',
    'blocks:1.5',
    ' bytes',
    'anthropic:2h',
    'anthropic:1h:ttl=60',
    'deepseek:64',
    'lru:ttl=60',
    'bytes:ttl=1:ttl=2',
    'bytes;ttl=60',
  ])('rejects %j with a TypeError naming the value and the accepted forms', (value) => {
    expect(() => parseCacheProfile(value)).toThrow(TypeError)
    expect(() => parseCacheProfile(value)).toThrow(
      `cache profile ${JSON.stringify(value)} is not valid; use ${PROFILE_SYNTAX} (N ≥ 1, S = seconds > 0)`,
    )
    expect(() => new PrefixCache(value)).toThrow(TypeError)
  })

  it.each([
    ['bytes:ttl=0', '0'],
    ['bytes:ttl=', ''],
    ['blocks:16:ttl=-5', '-5'],
    ['anthropic:ttl=abc', 'abc'],
    ['deepseek:ttl=Infinity', 'Infinity'],
    ['deepseek:ttl=1e3', '1e3'],
    ['blocks:128:1024:ttl=1e999', '1e999'],
    ['bytes:ttl=' + '9'.repeat(400), '9'.repeat(400)],
  ])('rejects the ttl of %j, naming the profile and the ttl', (value, seconds) => {
    expect(() => parseCacheProfile(value)).toThrow(TypeError)
    expect(() => parseCacheProfile(value)).toThrow(
      `cache profile ${JSON.stringify(value)} is not valid: ttl ${JSON.stringify(seconds)} must be a positive finite number of seconds (e.g. ttl=600); use ${PROFILE_SYNTAX}`,
    )
  })

  it('accepts a profile object as is', () => {
    const profile = { kind: 'blocks', name: 'custom', blockTokens: 64, minTokens: 64, ttlMs: 1000 } as const
    expect(new PrefixCache(profile).profile).toBe(profile)
  })
})

describe('tokensOf', () => {
  it('counts 4 characters per token, rounding up; whole tokens round down', () => {
    expect(CHARS_PER_TOKEN).toBe(4)
    expect([0, 1, 3, 4, 5, 8, 4097].map(tokensOf)).toEqual([0, 1, 1, 1, 2, 2, 1025])
    expect([0, 1, 3, 4, 5, 8, 4097].map(wholeTokensOf)).toEqual([0, 0, 0, 1, 1, 2, 1024])
  })
})
