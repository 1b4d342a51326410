import { describe, expect, it } from 'vitest'
import { CLAUDE_COMPACT_PCT, CLAUDE_COMPACT_WINDOW, claudeCode } from './agents/claude-code.ts'
import { RECORD_FIXTURES, writeAgentFixtures } from './agents/fixtures.ts'
import { describeRun } from './agents/run-agent.ts'
import type { ProxiedRun } from './agents/through-proxy.ts'
import { describeShares, expectPassedThrough, runThroughProxy } from './agents/through-proxy.ts'

/** The checks of both modes: one summary request, already warm, left untouched. */
function expectWarmSummary(proxied: ProxiedRun) {
  const { run } = proxied
  const { shares } = expectPassedThrough(proxied, 'anthropic-messages', 'untouched')
  const kinds = run.requests.map((entry) => entry.kind)
  expect(kinds.filter((kind) => kind === 'summary')).toHaveLength(1)
  expect(kinds.lastIndexOf('conversation')).toBeGreaterThan(kinds.indexOf('summary'))
  // The warm shape: same tools and system, the history replayed, the summary instruction appended.
  expect(shares[0]?.share).toBeGreaterThan(0.98)
  console.log(`${describeRun(run)}\n${describeShares(proxied, shares)}`)
  return shares
}

// Heavy set: installs @anthropic-ai/claude-code from npm once (into ~/.cache/warmfold-agents) and runs it as a
// process, twice, through a real WarmfoldProxy in front of the scripted upstream: warm summaries off, then on.
describe(`Claude Code ${claudeCode.version} through warmfold proxy to the scripted Anthropic Messages upstream`, () => {
  it(
    'warm summaries off: finishes its task, compacts once, every request forwarded byte for byte',
    {
      timeout: 300_000,
    },
    async () => {
      const proxied = await runThroughProxy(claudeCode, 'off')
      const shares = expectWarmSummary(proxied)
      if (RECORD_FIXTURES)
        writeAgentFixtures(claudeCode, proxied.run, [
          `Environment: \`ANTHROPIC_BASE_URL\`, a dummy \`ANTHROPIC_API_KEY\`, \`CLAUDE_CODE_AUTO_COMPACT_WINDOW=${CLAUDE_COMPACT_WINDOW}\``,
          `(its minimum) and \`CLAUDE_AUTOCOMPACT_PCT_OVERRIDE=${CLAUDE_COMPACT_PCT}\` (auto-compaction at about 30,000`,
          'tokens), non-essential traffic, telemetry, error reporting and the auto-updater off; `--allowedTools Bash`.',
          'The scripted server reports usage as body characters / 4 and answers `count_tokens` the same way.',
          'Recorded through `warmfold proxy` with warm summaries off (byte for byte).',
          `${describeRun(proxied.run)}.`,
          `Summary prefix share of the request before it: ${JSON.stringify(shares)}.`,
        ])
    },
  )

  it(
    'warm summaries on: its already-warm summary request still reaches the upstream byte for byte',
    {
      timeout: 300_000,
    },
    async () => {
      expectWarmSummary(await runThroughProxy(claudeCode, 'on'))
    },
  )
})
