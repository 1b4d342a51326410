import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { parseProxyArgs, PROXY_USAGE, TOKEN_ENV } from '../src/proxy/parse-proxy-args.ts'

const upstream = ['--upstream', 'https://api.anthropic.com']
const withKey = () => parseProxyArgs(['--upstream', 'https://me:sk-secret@api.openai.com/v1'], {})

describe('warmfold proxy flags', () => {
  it('defaults to observing on 127.0.0.1:8787 with no token, no log and no price', () => {
    expect(parseProxyArgs(upstream, {})).toEqual({
      upstream: 'https://api.anthropic.com',
      port: 8787,
      host: '127.0.0.1',
      warmSummaries: 'off',
      noBodies: false,
      help: false,
    })
  })

  it('reads every flag, a trailing slash of the upstream dropped', () => {
    const dir = mkdtempSync(join(tmpdir(), 'proxy-args-'))
    const price = join(dir, 'price.json')
    writeFileSync(price, JSON.stringify({ cacheRead: 0.1, cacheWrite: 1.25, output: 5, usdPerMillionInput: 3 }))
    const args = parseProxyArgs(
      [
        '--upstream',
        'http://127.0.0.1:9000/v1/',
        '--port',
        '0',
        '--warm-summaries',
        'dry-run',
        '--log',
        'p.jsonl',
        '--no-bodies',
        '--price',
        price,
      ],
      {},
    )
    expect(args).toMatchObject({ upstream: 'http://127.0.0.1:9000/v1', port: 0, warmSummaries: 'dry-run' })
    expect(args).toMatchObject({ log: 'p.jsonl', noBodies: true, price: { cacheRead: 0.1, usdPerMillionInput: 3 } })
    expect(parseProxyArgs([...upstream, '--price', 'openai'], {}).price?.name).toBe('openai')
  })

  it('refuses a missing or malformed upstream, naming the value but never its credentials', () => {
    expect(() => parseProxyArgs([], {})).toThrow('warmfold proxy needs --upstream URL')
    expect(() => parseProxyArgs(['--upstream', 'api.openai.com'], {})).toThrow(
      '--upstream must be an http(s) base URL, got "api.openai.com"',
    )
    expect(withKey).toThrow('must not carry credentials')
    expect(withKey).not.toThrow(/sk-secret/)
    expect(() => parseProxyArgs(['--upstream', 'https://x.test/v1?key=abc'], {})).toThrow('without a query')
  })

  it('refuses a bad port or mode by name', () => {
    expect(() => parseProxyArgs([...upstream, '--port', '70000'], {})).toThrow('--port 70000 is above the bound')
    expect(() => parseProxyArgs([...upstream, '--port', 'http'], {})).toThrow('--port must be an integer ≥ 0')
    expect(() => parseProxyArgs([...upstream, '--warm-summaries', 'yes'], {})).toThrow(
      '--warm-summaries must be one of off, dry-run, on, got "yes"',
    )
  })

  it('needs a token off loopback, from the flag or the environment, and never quotes it', () => {
    expect(() => parseProxyArgs([...upstream, '--host', '0.0.0.0'], {})).toThrow(
      `--host 0.0.0.0 lets other machines reach the proxy; give a token with --token or ${TOKEN_ENV}`,
    )
    const token = 'a-token-of-24-characters'
    // The plugin's loopback rule: any 127.x.y.z and [::1] need no token, like 127.0.0.1.
    for (const host of ['127.0.0.2', '[::1]', 'LOCALHOST'])
      expect(parseProxyArgs([...upstream, '--host', host], {}).host).toBe(host)
    expect(parseProxyArgs([...upstream, '--host', '0.0.0.0', '--token', token], {}).token).toBe(token)
    expect(parseProxyArgs([...upstream, '--host', '0.0.0.0'], { [TOKEN_ENV]: token }).token).toBe(token)
    const short = () => parseProxyArgs([...upstream, '--token', 'hunter2'], {})
    expect(short).toThrow('the proxy token must be at least 16 characters, got 7')
    expect(short).not.toThrow(/hunter2/)
  })

  it('prints its usage from the flag table', () => {
    expect(parseProxyArgs(['--help'], {}).help).toBe(true)
    for (const flag of ['--upstream URL', '--port N', '--warm-summaries MODE', '--no-bodies', '--price PROFILE'])
      expect(PROXY_USAGE).toContain(flag)
  })
})
