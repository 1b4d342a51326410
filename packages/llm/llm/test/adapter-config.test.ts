import { describe, expect, it } from 'vitest'
import { checkModelKeys, isHttpUrl, resolveAdapterApiKey } from '../src/adapter-config.ts'

describe('adapter config helpers', () => {
  it('isHttpUrl takes absolute http(s) URLs only', () => {
    expect(['http://127.0.0.1:8080/v1', 'https://api.example.test'].map(isHttpUrl)).toEqual([true, true])
    expect(['ftp://x.test', 'api.example.test', '/v1'].map(isHttpUrl)).toEqual([false, false, false])
  })

  it('checkModelKeys names the owner, the model and the unknown key', () => {
    expect(() => checkModelKeys('XAdapter', { 'm-1': { contextWindow: 1, window: 2 } }, ['contextWindow'])).toThrow(
      'XAdapter config: models["m-1"]: unknown key "window"; known keys: contextWindow',
    )
    expect(() => checkModelKeys('XAdapter', 'not an object', ['contextWindow'])).not.toThrow()
  })

  it('resolveAdapterApiKey reads apiKey, else apiKeyEnv, else the default variable, trimmed, never quoting a value', () => {
    expect(resolveAdapterApiKey('XAdapter', 'X', { apiKey: ' sk-1\n' }, 'X_KEY', {})).toBe('sk-1')
    expect(resolveAdapterApiKey('XAdapter', 'X', { apiKeyEnv: 'MY_KEY' }, 'X_KEY', { MY_KEY: 'sk-2\r\n' })).toBe('sk-2')
    expect(resolveAdapterApiKey('XAdapter', 'X', {}, 'X_KEY', { X_KEY: 'sk-3' })).toBe('sk-3')
    expect(() => resolveAdapterApiKey('XAdapter', 'X', {}, 'X_KEY', {})).toThrow(
      'XAdapter: the environment variable X_KEY (apiKeyEnv) is not set; export the X API key in it, or name another variable with apiKeyEnv',
    )
    const inside = (() => {
      try {
        resolveAdapterApiKey('XAdapter', 'X', { apiKeyEnv: 'MY_KEY' }, 'X_KEY', { MY_KEY: 'sk secret' })
      } catch (error) {
        return (error as Error).message
      }
    })()
    expect(inside).toContain(
      'XAdapter: the environment variable MY_KEY (apiKeyEnv) has whitespace or a control character inside the key',
    )
    expect(inside).not.toContain('secret')
  })
})
