import { describe, expect, it } from 'vitest'
import { RECORD_FIXTURES, writeAgentFixtures } from './agents/fixtures.ts'
import { QWEN_CONTEXT_WINDOW, qwenCodeSpec } from './agents/qwen-code.ts'
import { describeRun } from './agents/run-agent.ts'
import { describeShares, expectPassedThrough, runThroughProxy } from './agents/through-proxy.ts'

const spec = qwenCodeSpec(false)

// Heavy set: installs @qwen-code/qwen-code from npm once (into ~/.cache/warmfold-agents) and runs it as a process,
// twice, through a real WarmfoldProxy in front of the scripted upstream: warm summaries off, then on.
describe(`Qwen Code ${spec.version} through warmfold proxy to the scripted Chat Completions upstream, cache sharing off (enableCacheControl: false)`, () => {
  it(
    'warm summaries off: finishes its task, compacts on the way, every request forwarded byte for byte, the summaries cold',
    {
      timeout: 300_000,
    },
    async () => {
      const proxied = await runThroughProxy(spec, 'off')
      const { run } = proxied
      const { shares } = expectPassedThrough(proxied, 'openai-chat', 'rewritten')
      const kinds = run.requests.map((entry) => entry.kind)
      // The dedicated summarizer keeps the recent tool results, so a second compaction may follow the first.
      expect(kinds.filter((kind) => kind === 'summary').length).toBeGreaterThanOrEqual(1)
      // After the summary the agent goes on with its task: the final answer comes from a conversation request.
      expect(kinds.lastIndexOf('conversation')).toBeGreaterThan(kinds.indexOf('summary'))
      // The cold shape: the compression prompt replaces the system prompt and the tools are dropped, so the
      // summary request shares nothing with the request before it in render order (tools come first).
      for (const share of shares) expect(share.share).toBeLessThan(0.05)
      for (const entry of run.requests.filter((request) => request.kind === 'summary'))
        expect((entry.request.json as Record<string, unknown>).tools).toBeUndefined()
      console.log(`${describeRun(run)}\n${describeShares(proxied, shares)}`)
      if (RECORD_FIXTURES)
        writeAgentFixtures(spec, run, [
          `Settings: \`~/.qwen/settings.json\` sets \`model.generationConfig.contextWindowSize\` to ${QWEN_CONTEXT_WINDOW}`,
          '(auto-compaction at window − 33,000 = 22,000 tokens), background memory, follow-up suggestions, telemetry',
          'and update checks off; `model.generationConfig.enableCacheControl: false` turns its cache-sharing',
          'compaction request off, so it sends the dedicated summarizer request. The scripted server reports usage',
          'as body characters / 4. Recorded through `warmfold proxy` with warm summaries off (byte for byte).',
          `${describeRun(run)}.`,
          `Summary prefix share of the request before it: ${JSON.stringify(shares)}.`,
        ])
    },
  )

  it(
    'warm summaries on: finishes its task, and every summary request the upstream gets is warm',
    {
      timeout: 300_000,
    },
    async () => {
      const proxied = await runThroughProxy(spec, 'on')
      const { run } = proxied
      const { shares } = expectPassedThrough(proxied, 'openai-chat', 'rewritten')
      const kinds = run.requests.map((entry) => entry.kind)
      expect(kinds.filter((kind) => kind === 'summary').length).toBeGreaterThanOrEqual(1)
      expect(kinds.lastIndexOf('conversation')).toBeGreaterThan(kinds.indexOf('summary'))
      // The rewrite keeps the conversation's system prompt and tools and replays its messages, then the
      // compression prompt as the final user message.
      for (const share of shares) expect(share.share).toBeGreaterThanOrEqual(0.98)
      console.log(`${describeRun(run)}\n${describeShares(proxied, shares)}`)
    },
  )
})
