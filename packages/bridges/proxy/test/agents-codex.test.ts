import { describe, expect, it } from 'vitest'
import { RECORD_FIXTURES, writeAgentFixtures } from './agents/fixtures.ts'
import { CODEX_AUTO_COMPACT_LIMIT, CODEX_CONTEXT_WINDOW, codex } from './agents/codex.ts'
import { describeRun } from './agents/run-agent.ts'
import { describeShares, expectPassedThrough, runThroughProxy } from './agents/through-proxy.ts'

// Heavy set: installs @openai/codex from npm once (into ~/.cache/warmfold-agents) and runs it as a process,
// twice, through a real WarmfoldProxy in front of the scripted upstream: warm summaries off, then on.
describe(`Codex ${codex.version} through warmfold proxy to the scripted Responses upstream`, () => {
  it(
    'warm summaries off: finishes its task, compacts once, every request forwarded byte for byte, the summary cold',
    {
      timeout: 300_000,
    },
    async () => {
      const proxied = await runThroughProxy(codex, 'off')
      const { run } = proxied
      const { shares } = expectPassedThrough(proxied, 'openai-responses', 'rewritten')
      const kinds = run.requests.map((entry) => entry.kind)
      expect(kinds.filter((kind) => kind === 'summary')).toHaveLength(1)
      // After the summary the agent goes on with its task: the final answer comes from a conversation request.
      expect(kinds.lastIndexOf('conversation')).toBeGreaterThan(kinds.indexOf('summary'))
      // The cold shape: the compaction request replays the history and appends the checkpoint prompt, but sends
      // `tools: []` (and `parallel_tool_calls: false`), so in render order (tools first) it shares nothing.
      expect(shares[0]?.share).toBeLessThan(0.05)
      const summary = run.requests.find((entry) => entry.kind === 'summary')?.request.json as Record<string, unknown>
      expect(summary.tools).toEqual([])
      console.log(`${describeRun(run)}\n${describeShares(proxied, shares)}`)
      if (RECORD_FIXTURES)
        writeAgentFixtures(codex, run, [
          `Settings: \`$CODEX_HOME/config.toml\` (CODEX_HOME=$HOME/.codex) with a custom \`[model_providers.scripted]\``,
          '(`base_url`, `env_key`, `wire_api = "responses"`, no retries), `model_context_window = ' +
            `${CODEX_CONTEXT_WINDOW}\`, \`model_auto_compact_token_limit = ${CODEX_AUTO_COMPACT_LIMIT}\`, approval`,
          '`never`, sandbox `danger-full-access`, analytics and update checks off. The scripted server reports usage',
          'as body characters / 4. Recorded through `warmfold proxy` with warm summaries off (byte for byte).',
          `${describeRun(run)}.`,
          `Summary prefix share of the request before it: ${JSON.stringify(shares)}.`,
        ])
    },
  )

  it(
    'warm summaries on: finishes its task, and the summary request the upstream gets is warm',
    {
      timeout: 300_000,
    },
    async () => {
      const proxied = await runThroughProxy(codex, 'on')
      const { run } = proxied
      const { shares } = expectPassedThrough(proxied, 'openai-responses', 'rewritten')
      const kinds = run.requests.map((entry) => entry.kind)
      expect(kinds.filter((kind) => kind === 'summary')).toHaveLength(1)
      expect(kinds.lastIndexOf('conversation')).toBeGreaterThan(kinds.indexOf('summary'))
      // The rewrite replays the conversation request whole (tools included) and appends the checkpoint prompt.
      expect(shares).toHaveLength(1)
      for (const share of shares) expect(share.share).toBeGreaterThanOrEqual(0.98)
      console.log(`${describeRun(run)}\n${describeShares(proxied, shares)}`)
    },
  )
})
