import { readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { FIXTURES_DIR } from './agents/fixtures.ts'
import { summaryPrefixShares } from './agents/prefix-share.ts'
import { readAgentFixtures } from './agents/read-fixtures.ts'

// The recorded runs of the heavy set's agent tests (fast: files only). What the warm room starts from:
// the summary request of each agent, and how much of the request before it it repeats.
describe('recorded agent runs', () => {
  it.each([
    ['qwen-code-0.24.4', 'openai-chat', 2, 'warm'],
    ['qwen-code-cold-0.24.4', 'openai-chat', 2, 'cold'],
    ['codex-0.171.0', 'openai-responses', 1, 'cold'],
    ['gemini-cli-0.61.0', 'gemini', 2, 'cold'],
    ['claude-code-2.1.332', 'anthropic-messages', 1, 'warm'],
  ] as const)('%s (%s) sends %i summary request(s), %s', (folder, api, summaries, shape) => {
    const requests = readAgentFixtures(folder)
    const shares = summaryPrefixShares(requests, api)
    expect(shares).toHaveLength(summaries)
    for (const share of shares)
      if (shape === 'warm') expect(share.share).toBeGreaterThanOrEqual(0.98)
      else expect(share.share).toBeLessThan(0.01)
  })

  it('keep every file under 200 KB and no credential in a header', () => {
    for (const folder of readdirSync(FIXTURES_DIR)) {
      for (const file of readdirSync(join(FIXTURES_DIR, folder)))
        expect(statSync(join(FIXTURES_DIR, folder, file)).size, `${folder}/${file}`).toBeLessThan(200_000)
      for (const { request } of readAgentFixtures(folder))
        for (const name of ['authorization', 'x-api-key', 'x-goog-api-key'])
          if (name in request.headers) expect(request.headers[name], `${folder} ${name}`).toBe('[redacted]')
    }
  })
})
